import Foundation
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
                let child = try ChildProcess.start(
                    ["trust-set-then-return", directory.path, name, "key", "value \(round)"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
                guard child.output.fileHandleForReading.readLine() == "ready" else {
                    Issue.record("round \(round): the child did not start")
                    kill(child.process.processIdentifier, SIGKILL)
                    child.process.waitUntilExit()
                    return
                }
                // Before, around and after the 50 ms coalescing window.
                usleep(UInt32(round % 5) * 20_000)
                kill(child.process.processIdentifier, round.isMultiple(of: 2) ? SIGTERM : SIGINT)
                child.process.waitUntilExit()
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
            let child = try ChildProcess.start(
                ["trust-blocked-signals", directory.path, "blocked", "key", "value"],
                environment: ["XDG_CONFIG_HOME": directory.path])
            defer {
                if child.process.isRunning {
                    kill(child.process.processIdentifier, SIGKILL)
                    child.process.waitUntilExit()
                }
            }
            try #require(child.output.fileHandleForReading.readLine() == "ready")
            kill(child.process.processIdentifier, SIGTERM)
            let rest = String(decoding: child.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.process.waitUntilExit()
            #expect(child.process.terminationReason == .exit && child.process.terminationStatus == 0)
            #expect(rest == "handled \(SIGTERM)\n")
            #expect(try directory.storedValues("blocked")["key"] as? String == "value")
        }

        /// A child forked by a program that opened a suite inherits the signal handler: SIGTERM
        /// sent to the child ends the child, not the parent.
        @Test func signalToAForkedChildEndsTheChildNotTheParent() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let parent = try ChildProcess.start(
                ["trust-fork", directory.path, "fork"], environment: ["XDG_CONFIG_HOME": directory.path])
            let line = try #require(parent.output.fileHandleForReading.readLine())
            let childID = try #require(Int32(line.dropFirst("child ".count)))
            kill(childID, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(60)
            while parent.process.isRunning, ContinuousClock.now < deadline {
                usleep(10_000)
            }
            let hasEnded = !parent.process.isRunning
            if !hasEnded || parent.process.terminationReason != .exit {
                // The parent has not waited for the child: the child is still there (and holds the
                // output pipe open), so no other process can have its ID yet.
                kill(childID, SIGKILL)
            }
            if !hasEnded {
                kill(parent.process.processIdentifier, SIGKILL)
            }
            parent.process.waitUntilExit()
            try #require(hasEnded, "the parent did not end: the signal did not end its child")
            let rest = String(decoding: parent.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(parent.process.terminationReason == .exit, "the parent was ended by a signal")
            #expect(rest == "child ended by signal \(SIGTERM)\n")
        }

        /// A program that installed its own SIGTERM handler before opening a suite keeps it: its
        /// handler runs, and the process is not ended by the library.
        @Test func programWithItsOwnHandlerKeepsIt() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let child = try ChildProcess.start(
                ["trust-own-handler", directory.path, "own"], environment: ["XDG_CONFIG_HOME": directory.path])
            defer {
                if child.process.isRunning {
                    kill(child.process.processIdentifier, SIGKILL)
                    child.process.waitUntilExit()
                }
            }
            try #require(child.output.fileHandleForReading.readLine() == "ready")
            kill(child.process.processIdentifier, SIGTERM)
            let rest = String(decoding: child.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.process.waitUntilExit()
            #expect(child.process.terminationReason == .exit && child.process.terminationStatus == 0)
            #expect(rest == "own handler ran \(SIGTERM)\n")
            #expect(try directory.storedValues("own")["key"] as? String == "value")
        }

        /// A termination signal ends the process by the signal (as its parent, a shell running a
        /// script, must see), also when every suite is gone and the signal makes `main` return
        /// while the library's handler runs.
        @Test func signalEndsTheProcessByTheSignalEvenWhenMainReturns() throws {
            let directory = try FileSuiteTemporaryDirectory()
            // The race is lost in some runs only.
            for round in 0..<10 {
                let child = try ChildProcess.start(
                    ["trust-no-suite-left", directory.path, "gone\(round)"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
                defer {
                    if child.process.isRunning {
                        kill(child.process.processIdentifier, SIGKILL)
                        child.process.waitUntilExit()
                    }
                }
                try #require(child.output.fileHandleForReading.readLine() == "ready")
                kill(child.process.processIdentifier, round.isMultiple(of: 2) ? SIGTERM : SIGINT)
                child.process.waitUntilExit()
                #expect(child.process.terminationReason == .uncaughtSignal, "round \(round)")
                #expect(child.process.terminationStatus == (round.isMultiple(of: 2) ? SIGTERM : SIGINT))
                #expect(try directory.storedValues("gone\(round)")["key"] as? String == "value")
            }
        }
    }
}
