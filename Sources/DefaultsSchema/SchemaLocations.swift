import Foundation

/// Where schemas live, as the XDG base directories say for data files:
/// `$XDG_DATA_HOME/defaults/schemas/<domain>.json` (`~/.local/share` unless set), then the same
/// under each directory of `$XDG_DATA_DIRS` (`/usr/local/share:/usr/share` unless set).
///
/// A program writes its schema to the first (``userDirectory(environment:)``); a package installs
/// it under the second (`/usr/share/defaults/schemas/<domain>.json`). A reader takes the first
/// file found, so a user's copy comes before a system's.
public enum SchemaLocations {
    /// The directories under each base directory that hold schemas.
    public static let subdirectory = "defaults/schemas"

    /// The variables the locations depend on, as this process's environment has them: the
    /// default of every `environment:` parameter here. Read one by one, because making the whole
    /// environment a dictionary costs more than finding a schema.
    public static var processEnvironment: [String: String] {
        var environment: [String: String] = [:]
        for name in ["XDG_DATA_HOME", "XDG_DATA_DIRS", "HOME"] {
            if let value = getenv(name) {
                environment[name] = String(cString: value)
            }
        }
        return environment
    }

    /// The user's schema directory: `$XDG_DATA_HOME/defaults/schemas`, or
    /// `~/.local/share/defaults/schemas` when the variable is unset, empty or not absolute.
    public static func userDirectory(environment: [String: String] = processEnvironment) -> URL {
        let base: String
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            base = home
        } else {
            let userHome = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
            base = (userHome as NSString).appendingPathComponent(".local/share")
        }
        return URL(fileURLWithPath: base, isDirectory: true).appendingPathComponent(subdirectory, isDirectory: true)
    }

    /// Every schema directory, in the order a reader searches them: the user's, then each of
    /// `$XDG_DATA_DIRS` (relative entries are ignored, as the specification says).
    public static func searchDirectories(environment: [String: String] = processEnvironment)
        -> [URL]
    {
        var systemDirectories = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init)
            .filter { $0.hasPrefix("/") }
        if systemDirectories.isEmpty {
            systemDirectories = ["/usr/local/share", "/usr/share"]
        }
        return [userDirectory(environment: environment)]
            + systemDirectories.map {
                URL(fileURLWithPath: $0, isDirectory: true).appendingPathComponent(subdirectory, isDirectory: true)
            }
    }

    /// The name of `domain`'s schema file, or `nil` for a name that cannot be one file's name
    /// (empty, `.` or `..`, or holding `/` or NUL).
    public static func fileName(forDomain domain: String) -> String? {
        guard !domain.isEmpty, domain != ".", domain != "..", !domain.contains("/"), !domain.utf8.contains(0) else {
            return nil
        }
        return domain + ".json"
    }

    /// The paths a reader tries for `domain`'s schema, in order.
    public static func candidateFiles(
        forDomain domain: String, environment: [String: String] = processEnvironment
    ) -> [URL] {
        guard let name = fileName(forDomain: domain) else { return [] }
        return searchDirectories(environment: environment).map { $0.appendingPathComponent(name, isDirectory: false) }
    }
}
