import ArgumentParser
import Defaults
import Foundation

/// What a command works on: a named suite, the global domain, or any property-list file.
enum Domain: Equatable {
    /// `<name>.plist` in the suites' directory.
    case named(String)
    /// `NSGlobalDomain`: `.GlobalPreferences.plist` in the suites' directory, the file Foundation
    /// on Linux reads as the global domain of every application.
    case global
    /// A property-list file given by path (`--path FILE`, or a domain that is a path).
    case file(path: String)

    static let globalDomainName = "NSGlobalDomain"
    /// The global domain's file name, as CoreFoundation on Linux names it.
    static let globalFileName = ".GlobalPreferences.plist"

    /// The domain an argument names, as `defaults` reads it: `NSGlobalDomain`, `-g` and
    /// `-globalDomain` are the global domain; an argument holding a `/` or starting with `~` is a
    /// file (`.plist` is added when the path as given does not exist, as macOS does).
    init(argument: String) throws(CommandFailure) {
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
    var displayName: String {
        switch self {
        case .named(let name): name
        case .global: Self.globalDomainName
        case .file(let path): path
        }
    }

    /// The name a suite opened on this domain reports.
    var suiteName: String {
        switch self {
        case .named(let name): name
        case .global: Self.globalDomainName
        case .file(let path): ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        }
    }

    /// The domain's file.
    func fileURL(in directory: URL) -> URL {
        switch self {
        case .named(let name): FileSuite.fileURL(forName: name, in: directory)
        case .global: directory.appendingPathComponent(Self.globalFileName, isDirectory: false)
        case .file(let path): URL(fileURLWithPath: path, isDirectory: false)
        }
    }

    /// Whether a domain with no keys counts as absent. A named domain emptied by
    /// `defaults delete` is gone, as on macOS (where its file is removed); a file given by path
    /// is read as it is.
    var isAbsentWhenEmpty: Bool {
        if case .file = self { false } else { true }
    }
}

/// The options that choose a domain without naming it: `-g` for the global domain and
/// `--path FILE` for any property-list file. Without them, the first argument is the domain.
struct DomainSelection: ParsableArguments {
    @Flag(
        name: [.customShort("g"), .customLong("globalDomain", withSingleDash: true)],
        help: "Use the global domain, NSGlobalDomain."
    )
    var globalDomain = false

    @Option(
        name: [.customLong("path"), .customLong("path", withSingleDash: true)],
        help: ArgumentHelp("Use this property-list file instead of a domain.", valueName: "file"),
        completion: .file(extensions: ["plist"])
    )
    var path: String?

    /// Whether the domain is chosen by an option, so that every argument is taken as what follows
    /// the domain.
    var isGiven: Bool { globalDomain || path != nil }

    /// Two ways of choosing the domain at once is a usage error (exit status 64).
    func validate() throws {
        if globalDomain, path != nil {
            throw ValidationError("-g and --path cannot be used together")
        }
    }

    /// The domain chosen by an option, or else by the first of `arguments` (which is removed).
    /// `nil` when neither gives one.
    func take(from arguments: inout [String]) throws(CommandFailure) -> Domain? {
        if globalDomain {
            return .global
        }
        if let path {
            return .file(path: (path as NSString).expandingTildeInPath)
        }
        guard !arguments.isEmpty else { return nil }
        return try Domain(argument: arguments.removeFirst())
    }

    /// Like ``take(from:)``, for commands that need a domain.
    func require(from arguments: inout [String], usage: String) throws(CommandFailure) -> Domain {
        guard let domain = try take(from: &arguments) else {
            throw CommandFailure.usage("Missing domain", usage)
        }
        return domain
    }

    /// Like ``require(from:usage:)``, for commands that take a domain and exactly one more
    /// argument, named `what` in the message when it is missing.
    func requireDomain(
        andOne what: String,
        from arguments: [String],
        usage: String
    ) throws(CommandFailure) -> (Domain, String) {
        var arguments = arguments
        let domain = try require(from: &arguments, usage: usage)
        guard arguments.count == 1, let argument = arguments.first else {
            throw CommandFailure.usage(arguments.isEmpty ? "Missing \(what)" : "Too many arguments", usage)
        }
        return (domain, argument)
    }
}

/// The arguments of `export` and `import`: a domain (unless `-g` or `--path` names one), then a
/// file or `-`.
struct DomainAndFile: ParsableArguments {
    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp(
            "The domain (unless -g or --path is given), then the file or -.", valueName: "domain> <file"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    /// The domain and the file, or a usage error naming `usage`.
    func resolve(usage: String) throws(CommandFailure) -> (Domain, String) {
        try selection.requireDomain(andOne: "file", from: arguments, usage: usage)
    }
}

/// Shell completion for the arguments that start with a domain: the domain, then a key of it (or
/// a file for export and import); see ``Completion``.
@Sendable
func completeDomainNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
    Completion.candidates(words, index, prefix)
}
