import ArgumentParser
import Defaults
import DefaultsCommandCore
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
            Changes made by any process are seen: the suite's file is watched (inotify), and so \
            are the administrator's files (XDG_CONFIG_DIRS); a line shows the value programs read, \
            the enforced one for a managed key. \
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

        let suite = store.watchedSuite(domain)
        suite.onProblem = { problem in
            Output.printError(problem.message)
        }
        let printer = ChangePrinter(suite: suite, json: json)
        if let key {
            printer.watch(key)
        } else {
            // A key that appears is watched from then on, its value printed first. Registered
            // before the keys already there are watched, so that none appears unseen between.
            _ = suite.changes.addObserver { change in
                for key in change.keys.sorted() {
                    printer.watch(key, printingItsValue: true)
                }
            }
            let administrator = suite.administratorValues()
            let keys = Set(suite.persistentValues().keys).union(administrator.vendor.keys).union(
                administrator.managed.keys)
            for key in keys.sorted() {
                printer.watch(key)
            }
        }
        Output.printError("Watching \(domain.displayName)\(key.map { " key \($0)" } ?? "") (Control-C to stop)")
        withExtendedLifetime((suite, signalSources)) {
            dispatchMain()
        }
    }
}

/// Prints the changes of a suite's keys as the library's observers of those keys see them: one
/// ``Defaults/observe(_:options:handler:)`` a key, so that a change is printed once, with the
/// value it made, in the order the library delivers it.
final class ChangePrinter: Sendable {
    private let suite: FileSuite
    private let json: Bool
    /// The observation of each watched key, by name.
    private let observations = Mutex<[String: Defaults.KeyObservation]>([:])
    /// Held while printing, so that lines from two threads are not interleaved.
    private let output = Mutex(())

    init(suite: FileSuite, json: Bool) {
        self.suite = suite
        self.json = json
    }

    /// Prints each change of `key` from now on (and its value now, if it has one, when
    /// `printingItsValue`); does nothing if `key` is watched already.
    func watch(_ key: String, printingItsValue: Bool = false) {
        observations.withLock { observations in
            guard observations[key] == nil else { return }
            let observed = Defaults.Key<Defaults.AnySerializable?>(key, suite: suite)
            observations[key] = Defaults.observe(observed, options: printingItsValue ? [.initial] : []) {
                [self] change in
                // The initial value of a key that has just appeared; nothing to print if it is
                // already gone again.
                if change.isInitial, change.newValue == nil {
                    return
                }
                let value = Defaults.AnySerializable.bridge.serialize(change.newValue)
                output.withLock { _ in
                    let text = line(key: key, value: value)
                    json ? Output.printJSON(text) : Output.print("\(text)")
                }
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
