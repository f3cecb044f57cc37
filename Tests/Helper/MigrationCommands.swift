@_spi(Testing) import Defaults
import Foundation

/// Commands that run keys' migrations (`Defaults.Migration`) from a real process, on a suite's
/// directory and name given first.
enum MigrationCommands {
    /// `migrate-renamed DIR NAME COUNT [GO_FILE]`: opens the suite, waits until GO_FILE exists
    /// (when given, so that several processes start migrating together), then declares COUNT
    /// `Double` keys `new<i>`, each renamed from `old<i>`, in one `Defaults.migrate`. Prints
    /// `writes <n>`, the suite's file writes, then `done`.
    static func renamed(_ arguments: [String]) {
        let suite = FileSuiteCommands.suite(arguments)
        guard let count = Int(arguments[2]) else { FileSuiteCommands.fail("bad count") }
        if arguments.count > 3 {
            FileSuiteCommands.printFlushed("ready")
            while !FileManager.default.fileExists(atPath: arguments[3]) {
                usleep(1_000)
            }
        }
        Defaults.migrate(
            (0..<count).map { index in
                Defaults.Key<Double>("new\(index)", default: -1, suite: suite, migrating: .renamed(from: "old\(index)"))
            })
        FileSuiteCommands.printFlushed("writes \(suite.writeCount)")
        FileSuiteCommands.printFlushed("done")
    }

    /// `migrate-chain DIR NAME VERSION`: the key of one version of a program whose key was
    /// renamed twice: version 2 declares `b` (was `a`), version 3 declares `c` (was `b`, before
    /// that `a`). Prints the key's value, then flushes.
    static func chain(_ arguments: [String]) {
        let suite = FileSuiteCommands.suite(arguments)
        let value: Int
        switch arguments[2] {
        case "2":
            value = Defaults[Defaults.Key<Int>("b", default: -1, suite: suite, migrating: .renamed(from: "a"))]
        case "3":
            value = Defaults[Defaults.Key<Int>("c", default: -1, suite: suite, migrating: .renamed(from: "b", "a"))]
        default:
            FileSuiteCommands.fail("unknown version \(arguments[2])")
        }
        do { try suite.flush() } catch { FileSuiteCommands.fail("\(error)") }
        FileSuiteCommands.printFlushed("\(value)")
    }
}
