import ArgumentParser
import DefaultsTerminalText
import Logging

/// `defaults-sync`: how `Defaults.iCloud` syncs on this machine. A command of its own, apart from
/// `defaults`, so that the settings command builds without the PostgreSQL client, the sync
/// service's WebSocket client and their TLS stack.
@main
struct DefaultsSyncTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults-sync",
        abstract: "Show how settings sync between machines (Defaults.iCloud).",
        version: "0.1.0",
        subcommands: [Status.self],
        defaultSubcommand: Status.self
    )

    /// The environment variable that holds the store's URL: `postgres://…` or the sync service's
    /// `ws://…`/`wss://…`.
    static let urlVariable = "DEFAULTS_SYNC_URL"
    /// The environment variable that holds the namespace, for the store's record count.
    static let namespaceVariable = "DEFAULTS_SYNC_NAMESPACE"
    /// The environment variable that holds the sync service's token: never an argument, which any
    /// user of the machine could read with `ps`.
    static let tokenVariable = "DEFAULTS_SYNC_TOKEN"

    static func main() {
        // The report carries every problem itself; the library's log lines would repeat them.
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            // Help, the version and a completion script end in success and are the parser's own
            // text; any other report quotes the arguments.
            let status = exitCode(for: error)
            guard !status.isSuccess else { exit(withError: error) }
            TerminalText.printArgumentError(fullMessage(for: error), quoting: message(for: error))
            exit(withError: status)
        }
    }
}
