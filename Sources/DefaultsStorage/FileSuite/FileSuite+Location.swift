import DefaultsFiles
import Foundation

extension FileSuite {
    /// The directory Foundation keeps suites in on Linux: `$XDG_CONFIG_HOME` when it is set to an
    /// absolute path, else `~/.config`.
    public static var defaultDirectory: URL {
        if let configHome = EnvironmentVariable.value("XDG_CONFIG_HOME"), configHome.hasPrefix("/") {
            return URL(fileURLWithPath: configHome, isDirectory: true)
        }
        let home = EnvironmentVariable.value("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config", isDirectory: true)
    }

    /// The file Foundation uses for the suite `name` in `directory`: `<directory>/<name>.plist`.
    ///
    /// A name that cannot name a file (empty, `.`, `..`, or holding `/` or NUL) is escaped, as in
    /// a URL (`a/b` is `a%2Fb.plist`), so that it still names a file in `directory`.
    public static func fileURL(forName name: String, in directory: URL = defaultDirectory) -> URL {
        directory.appendingPathComponent(fileName(forName: name), isDirectory: false)
    }

    /// `<name>.plist`, with the name escaped if it cannot name a file: `/` and NUL as `%2F` and
    /// `%00`, the dots of `.` and `..` as `%2E`, and an empty name as `%`.
    static func fileName(forName name: String) -> String {
        guard nameProblem(name) != nil else { return name + ".plist" }
        if name.isEmpty { return "%.plist" }
        if name == "." || name == ".." { return String(repeating: "%2E", count: name.count) + ".plist" }
        var escaped = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "/": escaped += "%2F"
            case "\0": escaped += "%00"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + ".plist"
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
