import Defaults
import Foundation

/// An application that declares its keys with descriptions and allowed values, in a file suite,
/// and exports its schema where the `defaults` command finds it (`$XDG_DATA_HOME`).
enum SchemaCommands {
    enum Palette: String, Defaults.Serializable {
        case light, dark, system
    }

    /// `schema-export DIR NAME [--release 2|3]`: declares the keys of release 1 (and those added in
    /// release 2, or the renamed keys of release 3: `fontSize` was `textSize`, `accentColor` was
    /// `tint`, and `color` before it, and `volume` was `loudness`, a percentage the program's own
    /// closure converts), reads each, exports the schema and prints its path.
    static func export(_ arguments: [String]) {
        let suite = FileSuiteCommands.suite(arguments)
        let release = arguments.firstIndex(of: "--release").flatMap { arguments.dropFirst($0 + 1).first }
        let keys = declare(in: suite, release: release)
        do {
            let url = try Defaults.exportSchema(of: suite)
            print(url.path)
            print(keys.count)
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
    }

    /// `schema-observe DIR NAME`: the program of release 1, running: exports its schema, prints
    /// `ready`, then `fontSize=<value>` from its `Defaults.observe` handler at each change of
    /// `fontSize`, until it is stopped.
    static func observe(_ arguments: [String]) {
        let suite = FileSuiteCommands.suite(arguments)
        guard let fontSize = declare(in: suite, release: nil).first as? Defaults.Key<Int> else {
            FileSuiteCommands.fail("fontSize is not the first key")
        }
        do {
            _ = try Defaults.exportSchema(of: suite)
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
        let observation = Defaults.observe(fontSize, options: []) { change in
            FileSuiteCommands.printFlushed("fontSize=\(change.newValue)")
        }
        FileSuiteCommands.printFlushed("ready")
        withExtendedLifetime(observation) {
            while true { sleep(60) }
        }
    }

    /// The keys of `release` (1 when `nil`), declared in `suite`.
    private static func declare(in suite: FileSuite, release: String?) -> [Defaults.Keys] {
        var keys: [Defaults.Keys] = [
            Defaults.Key<Int>(
                "fontSize", default: 12, suite: suite, description: "The size of the text, in points.", range: 8...72,
                migrating: release == "3" ? .renamed(from: "textSize") : nil),
            Defaults.Key<Palette>(
                "theme", default: .system, suite: suite, description: "The colors of the window.",
                choices: [.light, .dark, .system]),
            Defaults.Key<Double>(
                "volume", default: 0.5, suite: suite, description: "How loud.", range: 0...1,
                migrating: release == "3"
                    ? .converted(from: "loudness", as: Int.self) { percent in
                        (0...100).contains(percent) ? Double(percent) / 100 : nil
                    } : nil),
            Defaults.Key<String?>("nickname", suite: suite, iCloud: true, description: "What to call the user."),
            Defaults.Key<Bool>("showsToolbar", default: true, suite: suite),
        ]
        if release == "2" {
            keys.append(
                Defaults.Key<[String]>("recentSearches", default: [], suite: suite, description: "Searched last."))
        }
        if release == "3" {
            keys.append(
                Defaults.Key<String>(
                    "accentColor", default: "blue", suite: suite, migrating: .renamed(from: "tint", "color")))
        }
        return keys
    }
}
