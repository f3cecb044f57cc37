import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Item 1: a value set just before SIGTERM or SIGINT is on disk, also when the signal makes
    /// `main` return (and the suite be released) while the termination handler runs.
    @Suite struct TerminationSignalTests {
        @Test func valueSetBeforeATerminationSignalIsOnDisk() throws {
            let directory = try FileSuiteTemporaryDirectory()
            // The race is lost in some runs only; 20 rounds, alternating signals and delays.
            for round in 0..<20 {
                let name = "signal\(round)"
                let child = try TestHelper.start(
                    ["trust-set-then-return", directory.path, name, "key", "value \(round)"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
                _ = try child.line { $0 == "ready" }
                // Before, around and after the 50 ms coalescing window.
                usleep(UInt32(round % 5) * 20_000)
                child.signal(round.isMultiple(of: 2) ? SIGTERM : SIGINT)
                try child.wait()
                let values = try? directory.storedValues(name)
                #expect(
                    values?["key"] as? String == "value \(round)",
                    "round \(round): the file holds \(values.map { "\($0)" } ?? "nothing")")
            }
        }

        /// An app's write waits to be written (its suite's delay is an hour), and SIGTERM comes on a
        /// busy machine: the value is on disk when the signal has ended the process, whether the
        /// signal makes `main` return (the exit path and the signal thread both flush) or `main`
        /// stays blocked (the signal thread alone), and whether the write goes through the suite
        /// or a key.
        @Test(arguments: ["trust-set-then-return --hour", "trust-key-set-then-return", "trust-set-then-block"])
        func valueWrittenBeforeSIGTERMOnABusyMachineIsOnDisk(command: String) throws {
            let directory = try FileSuiteTemporaryDirectory()
            // Two processes that keep both cores busy while the rounds run.
            let load = try (0..<2).map { _ in try ChildProcess("/bin/sh", ["-c", "while :; do :; done"]) }
            defer {
                for process in load { process.kill() }
            }
            let words = command.split(separator: " ").map(String.init)
            for round in 0..<25 {
                let name = "busy\(round)"
                let child = try TestHelper.start(
                    [words[0], directory.path, name, "key", "value \(round)"] + words.dropFirst(),
                    environment: ["XDG_CONFIG_HOME": directory.path])
                _ = try child.line { $0 == "ready" }
                usleep(UInt32(round % 4) * 5_000)
                child.signal(SIGTERM)
                #expect(try child.wait() == .signaled(SIGTERM), "round \(round)")
                let values = try? directory.storedValues(name)
                #expect(
                    values?["key"] as? String == "value \(round)",
                    "round \(round): the file holds \(values.map { "\($0)" } ?? "nothing")")
            }
        }

        /// A program that blocks SIGTERM in every thread and takes it when pending (as with
        /// `signalfd`) handles it itself: the library must not take the signal from it (and end
        /// the process).
        @Test func programTakingBlockedSignalsItselfKeepsThem() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let child = try TestHelper.start(
                ["trust-blocked-signals", directory.path, "blocked", "key", "value"],
                environment: ["XDG_CONFIG_HOME": directory.path])
            _ = try child.line { $0 == "ready" }
            child.signal(SIGTERM)
            let result = try child.finish()
            #expect(result.termination == .exited(0))
            #expect(result.output == "ready\nhandled \(SIGTERM)\n")
            #expect(try directory.storedValues("blocked")["key"] as? String == "value")
        }

        /// A child forked by a program that opened a suite inherits the signal handler: SIGTERM
        /// sent to the child ends the child, not the parent.
        @Test func signalToAForkedChildEndsTheChildNotTheParent() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let parent = try TestHelper.start(
                ["trust-fork", directory.path, "fork"], environment: ["XDG_CONFIG_HOME": directory.path])
            let line = try parent.line { $0.hasPrefix("child ") }
            let childID = try #require(Int32(line.dropFirst("child ".count)))
            kill(childID, SIGTERM)
            let termination: ChildProcess.Termination
            do {
                termination = try parent.wait()
            } catch {
                // The parent has not waited for the child: the child is still there (and holds the
                // output pipe open), so no other process can have its ID yet.
                kill(childID, SIGKILL)
                throw error
            }
            if termination != .exited(0) {
                kill(childID, SIGKILL)
            }
            #expect(termination == .exited(0), "the parent was ended by a signal")
            #expect(try parent.finish().output == "\(line)\nchild ended by signal \(SIGTERM)\n")
        }

        /// A program that installed its own SIGTERM handler before opening a suite keeps it: its
        /// handler runs, and the process is not ended by the library.
        @Test func programWithItsOwnHandlerKeepsIt() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let child = try TestHelper.start(
                ["trust-own-handler", directory.path, "own"], environment: ["XDG_CONFIG_HOME": directory.path])
            _ = try child.line { $0 == "ready" }
            child.signal(SIGTERM)
            let result = try child.finish()
            #expect(result.termination == .exited(0))
            #expect(result.output == "ready\nown handler ran \(SIGTERM)\n")
            #expect(try directory.storedValues("own")["key"] as? String == "value")
        }

        /// A termination signal ends the process by the signal (as its parent, a shell running a
        /// script, must see), also when every suite is gone and the signal makes `main` return
        /// while the library's handler runs.
        @Test func signalEndsTheProcessByTheSignalEvenWhenMainReturns() throws {
            let directory = try FileSuiteTemporaryDirectory()
            // The race is lost in some runs only.
            for round in 0..<10 {
                let child = try TestHelper.start(
                    ["trust-no-suite-left", directory.path, "gone\(round)"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
                _ = try child.line { $0 == "ready" }
                let signal = round.isMultiple(of: 2) ? SIGTERM : SIGINT
                child.signal(signal)
                #expect(try child.wait() == .signaled(signal), "round \(round)")
                #expect(try directory.storedValues("gone\(round)")["key"] as? String == "value")
            }
        }
    }
}
