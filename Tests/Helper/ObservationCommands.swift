import Defaults
import Foundation

/// Commands that change a file-backed suite from another process, for the observation tests.
enum ObservationCommands {
    /// `observation-write DIR SUITE KEY INTEGER`: sets an integer key of the file-backed suite SUITE
    /// in DIR through a typed key, flushes it and exits.
    static func write(_ arguments: [String]) {
        guard arguments.count == 4, let value = Int(arguments[3]) else {
            FileHandle.standardError.write(Data("usage: observation-write DIR SUITE KEY INTEGER\n".utf8))
            exit(64)
        }
        let directory = URL(fileURLWithPath: arguments[0], isDirectory: true)
        let suite = FileSuite(name: arguments[1], directory: directory, arguments: [])
        let key = Defaults.Key<Int>(arguments[2], default: 0, suite: suite)
        Defaults[key] = value
        do {
            try suite.flush()
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
    }
}
