import Foundation

extension FileSuite {
    /// The directory Foundation keeps suites in on Linux: `$XDG_CONFIG_HOME` when it is set to an
    /// absolute path, else `~/.config`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let configHome = environment["XDG_CONFIG_HOME"], configHome.hasPrefix("/") {
            return URL(fileURLWithPath: configHome, isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config", isDirectory: true)
    }

    /// The file Foundation uses for the suite `name` in `directory`: `<directory>/<name>.plist`.
    public static func fileURL(forName name: String, in directory: URL = defaultDirectory) -> URL {
        directory.appendingPathComponent(name + ".plist", isDirectory: false)
    }

    /// Why a suite name cannot name a file, or `nil` when it can.
    static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.contains("/") { return "it contains \"/\"" }
        if name == "." || name == ".." { return "it is \"\(name)\"" }
        if name.utf8.contains(0) { return "it contains a NUL character" }
        return nil
    }
}
