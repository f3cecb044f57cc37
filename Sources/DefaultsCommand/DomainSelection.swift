import ArgumentParser
import DefaultsCommandCore
import Foundation

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
