import ArgumentParser
import DefaultsCommandCore
import DefaultsTerminalText
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `defaults`: reads and changes the settings that this library (or Foundation) keeps in
/// property-list files, as macOS's `defaults(1)` does for its preferences.
struct DefaultsTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults",
        abstract: "Read and change the settings of applications that use swift-defaults or Foundation.",
        discussion: """
            A domain is a suite name such as com.example.app, stored as <name>.plist in \
            $XDG_CONFIG_HOME (or ~/.config), the directory Foundation uses on Linux. \
            NSGlobalDomain (or -g) is the global domain, .GlobalPreferences.plist in the same \
            directory. --path FILE works on any property-list file instead of a domain.

            Writes take the suite's lock and merge with the file, so running applications keep \
            their own changes and see this one through their change stream.

            Shell completions: defaults --generate-completion-script bash|zsh|fish. \
            Sync status is a command of its own: defaults-sync status.
            """,
        version: "0.1.0",
        subcommands: [
            Domains.self, Read.self, ReadType.self, Write.self, Delete.self, Rename.self, Find.self,
            Export.self, Import.self, Watch.self, ReadSource.self, ListKeys.self, Describe.self,
            RangeCommand.self, Writable.self, Check.self, Reset.self, Explain.self, JSONSchemaCommand.self,
            Migrate.self, Edit.self,
        ]
    )
}

@main
enum Main {
    static func main() {
        // The command reports every problem itself, in macOS's words; the library's log lines
        // would repeat them. `watch` prints the problems it meets through the suite's `onProblem`.
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        do {
            var command = try DefaultsTool.parseAsRoot()
            try command.run()
        } catch let failure as CommandFailure {
            Output.printError(failure)
            // `_exit`, not `exit`: a suite whose flush failed must not be written by the exit
            // handler after the command said that nothing was written. Output is unbuffered.
            _exit(failure.status)
        } catch {
            // Help, the version, a completion script and completion candidates end in success
            // and are the parser's own text or `Completion`'s; any other report quotes arguments.
            let status = DefaultsTool.exitCode(for: error)
            guard !status.isSuccess else { DefaultsTool.exit(withError: error) }
            TerminalText.printArgumentError(
                DefaultsTool.fullMessage(for: error), quoting: DefaultsTool.message(for: error))
            DefaultsTool.exit(withError: status)
        }
    }
}
