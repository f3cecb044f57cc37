import ArgumentParser
import DefaultsCommandCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `defaults edit domain`: the domain's settings in the browser, served by `defaults-edit-server`,
/// which this command becomes (`defaults` itself builds without an HTTP server).
struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Edit a domain's settings in the browser.",
        discussion: """
            Serves a page on 127.0.0.1 drawn from the domain's schema: every key with its \
            description, type, default and value, a control for each, checked as `defaults write` \
            checks, managed keys read-only, changes made elsewhere shown as they happen. The \
            address holds a secret; the page is served until the command is stopped. Runs \
            defaults-edit-server, found beside defaults or on the PATH.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Option(help: "The port on 127.0.0.1 (a free one when not given).")
    var port: Int?

    @Flag(help: "Print the address without opening a browser.")
    var noOpen = false

    @Argument(
        help: ArgumentHelp("The domain (unless -g or --path is given).", valueName: "domain"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let domain = try selection.require(from: &arguments, usage: "defaults edit <domain>")
        guard arguments.isEmpty else { throw CommandFailure.usage("Too many arguments", "defaults edit <domain>") }
        guard let server = Self.serverPath() else {
            throw CommandFailure(
                "defaults edit needs defaults-edit-server, beside defaults or on the PATH "
                    + "(swift build --product defaults-edit-server)")
        }
        var words = [server]
        if let port {
            words += ["--port", String(port)]
        }
        if noOpen {
            words.append("--no-open")
        }
        words += Self.arguments(for: domain)
        let cWords = words.map { strdup($0) } + [nil]
        execv(server, cWords)
        throw CommandFailure("Could not run \(server): \(String(cString: strerror(errno)))")
    }

    /// The domain as the server's arguments, as this command chose it: a file by `--path` (taken
    /// as it is named), a name after `--` (so that a name such as `-x` is not an option).
    private static func arguments(for domain: Domain) -> [String] {
        switch domain {
        case .named(let name): ["--", name]
        case .global: ["-g"]
        case .file(let path): ["--path", path]
        }
    }

    /// `defaults-edit-server` beside this executable, else the first on the PATH.
    private static func serverPath() -> String? {
        let name = "defaults-edit-server"
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((executable as NSString).deletingLastPathComponent + "/" + name)
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        candidates += path.split(separator: ":").map { "\($0)/\(name)" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
