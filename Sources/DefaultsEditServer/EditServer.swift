import ArgumentParser
import DefaultsCommandCore
import DefaultsEditor
import Dispatch
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `defaults-edit-server DOMAIN`: serves the settings editor of a domain on loopback until it is
/// stopped. `defaults edit` starts it; it is a program of its own so that `defaults` builds
/// without an HTTP server.
@main
struct EditServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults-edit-server",
        abstract: "Serve the settings editor of a domain on 127.0.0.1 (started by `defaults edit`).",
        discussion: """
            Prints the editor's address, which holds a secret: a request without it is refused. \
            Unless --no-open is given, opens it in the browser through a file only you can read, \
            so that the secret is on no command line.
            """
    )

    @Argument(help: "The domain: a suite name, or NSGlobalDomain (unless -g or --path is given).")
    var domain: String?

    @Flag(name: .customShort("g"), help: "Edit the global domain, NSGlobalDomain.")
    var globalDomain = false

    @Option(help: ArgumentHelp("Edit this property-list file, as it is named.", valueName: "file"))
    var path: String?

    @Option(help: "The port on 127.0.0.1 (a free one when 0).")
    var port: Int = 0

    @Flag(help: "Print the address without opening a browser.")
    var noOpen = false

    func run() async throws {
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        // The domain as `defaults` chose it: a file's path is taken as it is named.
        let domain: Domain
        switch (self.domain, globalDomain, path) {
        case (nil, true, nil): domain = .global
        case (nil, false, let path?): domain = .file(path: path)
        case (let name?, false, nil):
            do {
                domain = try Domain(argument: name)
            } catch {
                Output.printError(error)
                throw ExitCode(1)
            }
        default: throw ValidationError("Give one domain: a name, -g, or --path FILE")
        }
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be 0 through 65535")
        }
        // A damaged file is reported and left where it is, as by `defaults read` (the suite the
        // server observes the domain through would move it aside).
        do {
            _ = try DomainStore().read(domain)
        } catch {
            Output.printError(error)
            throw ExitCode(1)
        }
        let server = try await EditorServer.start(domain: EditedDomain(domain: domain), port: port)
        Output.print("Editing \(domain.displayName) at \(server.address)")
        Output.printError("Stop with Control-C.")
        let opener = noOpen ? nil : BrowserOpener(address: server.address)
        let signals = [SIGINT, SIGTERM, SIGHUP].map { (number: Int32) -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler {
                opener?.remove()
                server.finishWork()
                endProcess()
            }
            source.resume()
            return source
        }
        opener?.open()
        try await server.run()
        withExtendedLifetime(signals) {}
    }
}

/// Ends the process (`exit` is shadowed inside a command).
private func endProcess() -> Never {
    exit(0)
}
