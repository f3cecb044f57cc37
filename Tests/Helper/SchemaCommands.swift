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
        do {
            let url = try Defaults.exportSchema(of: suite)
            print(url.path)
            print(keys.count)
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
    }
}
