import Defaults
import Foundation

/// What a command works on: a named suite, the global domain, or any property-list file.
package enum Domain: Equatable {
    /// `<name>.plist` in the suites' directory.
    case named(String)
    /// `NSGlobalDomain`: `.GlobalPreferences.plist` in the suites' directory, the file Foundation
    /// on Linux reads as the global domain of every application.
    case global
    /// A property-list file given by path (`--path FILE`, or a domain that is a path).
    case file(path: String)

    package static let globalDomainName = "NSGlobalDomain"
    /// The global domain's file name, as CoreFoundation on Linux names it.
    package static let globalFileName = ".GlobalPreferences.plist"

    /// The domain an argument names, as `defaults` reads it: `NSGlobalDomain`, `-g` and
    /// `-globalDomain` are the global domain; an argument holding a `/` or starting with `~` is a
    /// file (`.plist` is added when the path as given does not exist, as macOS does).
    package init(argument: String) throws(CommandFailure) {
        if argument == Self.globalDomainName || argument == "-g" || argument == "-globalDomain" {
            self = .global
            return
        }
        if argument.contains("/") || argument.hasPrefix("~") {
            let path = (argument as NSString).expandingTildeInPath
            if !path.hasSuffix(".plist"), !FileManager.default.fileExists(atPath: path) {
                self = .file(path: path + ".plist")
            } else {
                self = .file(path: path)
            }
            return
        }
        guard !argument.isEmpty, argument != ".", argument != "..", !argument.utf8.contains(0) else {
            throw CommandFailure("\"\(argument)\" is not a valid domain name; use a name such as com.example.app")
        }
        self = .named(argument)
    }

    /// The name messages use: the suite name, `NSGlobalDomain`, or the path.
    package var displayName: String {
        switch self {
        case .named(let name): name
        case .global: Self.globalDomainName
        case .file(let path): path
        }
    }

    /// The name a suite opened on this domain reports.
    package var suiteName: String {
        switch self {
        case .named(let name): name
        case .global: Self.globalDomainName
        case .file(let path): ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        }
    }

    /// The domain's file.
    package func fileURL(in directory: URL) -> URL {
        switch self {
        case .named(let name): FileSuite.fileURL(forName: name, in: directory)
        case .global: directory.appendingPathComponent(Self.globalFileName, isDirectory: false)
        case .file(let path): URL(fileURLWithPath: path, isDirectory: false)
        }
    }

    /// Whether a domain with no keys counts as absent. A named domain emptied by
    /// `defaults delete` is gone, as on macOS (where its file is removed); a file given by path
    /// is read as it is.
    package var isAbsentWhenEmpty: Bool {
        if case .file = self { false } else { true }
    }
}
