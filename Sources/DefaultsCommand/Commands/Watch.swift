import ArgumentParser
import Defaults
import DefaultsPropertyList
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `defaults watch domain [key]`: prints each change as it happens, until interrupted.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each change to a domain (or one key) as it happens, until interrupted.",
        discussion: """
            Prints one line per change: `key = value;` as `read` quotes it, or `key deleted`. \
            Changes made by any process are seen: the suite's file is watched (inotify). \
            Stops on Control-C (SIGINT) or SIGTERM. The line `Watching <domain>` on standard \
            error says when watching has started. With --json, each line is a JSON object: \
            {"key": …, "value": …} or {"key": …, "deleted": true}.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Flag(help: "Print each change as a line of JSON.")
    var json = false

    @Argument(
        help: ArgumentHelp(
            "The domain (unless -g or --path is given), then the key to watch.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let usage = "defaults watch <domain> [<key>]"
        let domain = try selection.require(from: &arguments, usage: usage)
        guard arguments.count <= 1 else {
            throw CommandFailure.usage("Too many arguments", usage)
        }
        let key = arguments.first
        let store = DomainStore()
        // A damaged file is reported and left alone, as by `read`. (Once watching, a file that
        // another program damages is moved aside by the suite, as in any running application;
        // the problem is printed on standard error.)
        _ = try store.read(domain)

        // Stop cleanly on SIGINT and SIGTERM. Set before the suite is opened, so that the
        // library leaves these signals to us.
        let signalSources = [SIGINT, SIGTERM].map { (number: Int32) -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler {
                endProcess(status: 0)
            }
            source.resume()
            return source
        }

        let suite = store.openSuite(domain)
        suite.onProblem = { problem in
            Output.printError(problem.message)
        }
        let printer = ChangePrinter(suite: suite, json: json)
        _ = suite.changes.addObserver(forKeys: key.map { [$0] }) { change in
            printer.print(change)
        }
        Output.printError("Watching \(domain.displayName)\(key.map { " key \($0)" } ?? "") (Control-C to stop)")
        withExtendedLifetime((suite, signalSources)) {
            dispatchMain()
        }
    }
}

/// Prints a suite's changes, one line each, skipping a key whose value is the one last printed
/// (two quick writes can arrive as two events that both find the second value).
final class ChangePrinter: Sendable {
    private let suite: FileSuite
    private let json: Bool
    /// The values last printed, by key.
    private let printed: Mutex<Snapshot>

    /// `@unchecked Sendable`: holds only property-list values (`String`, numbers, `Date`,
    /// `Data`, arrays and dictionaries of them), which share no mutable state.
    private struct Snapshot: @unchecked Sendable {
        var values: [String: Any]
    }

    init(suite: FileSuite, json: Bool) {
        self.suite = suite
        self.json = json
        printed = Mutex(Snapshot(values: suite.persistentValues()))
    }

    func print(_ change: SuiteChange) {
        let current = Snapshot(values: suite.persistentValues())
        // Under the lock, so that lines from two events are not interleaved or reordered.
        printed.withLock { printed in
            for key in change.keys.sorted() {
                let value = current.values[key]
                let previous = printed.values[key]
                switch (previous, value) {
                case (nil, nil):
                    continue
                case (let previous?, let value?) where PropertyList.isEqual(previous, value):
                    continue
                default:
                    break
                }
                printed.values[key] = value
                Output.print(line(key: key, value: value))
            }
        }
    }

    private func line(key: String, value: Any?) -> String {
        switch (json, value) {
        case (true, let value?):
            "{\"key\":\(Output.json(key, pretty: false)),\"value\":\(Output.json(value, pretty: false))}"
        case (true, nil):
            "{\"key\":\(Output.json(key, pretty: false)),\"deleted\":true}"
        case (false, let value?):
            Output.entryLine(key: key, value: value)
        case (false, nil):
            "\(Output.quotedKey(key)) deleted"
        }
    }
}

/// Ends the process, flushing as a normal exit does (`exit` is shadowed inside a command).
private func endProcess(status: Int32) -> Never {
    exit(status)
}
