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
    }
}
