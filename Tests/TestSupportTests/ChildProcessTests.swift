import Foundation
import TestSupport
import Testing

/// The launcher every test target uses, on programs every Linux machine has.
@Suite("ChildProcess", .mayBlock)
struct ChildProcessTests {
    /// A shell script run as a child.
    private func shell(
        _ script: String, environment: [String: String] = [:], directory: String? = nil, input: Data? = nil,
        timeout: Duration = defaultWaitTimeout
    ) throws -> ChildProcess.Result {
        try ChildProcess.run(
            "/bin/sh", ["-c", script], environment: environment, directory: directory, input: input, timeout: timeout)
    }

    @Test func exitStatusAndBothOutputsAreReported() throws {
        let result = try shell("printf out; printf err >&2; exit 3")
        #expect(result.termination == .exited(3))
        #expect(result.status == 3)
        #expect(result.output == "out")
        #expect(result.error == "err")
    }

    @Test func argumentsArriveUnchanged() throws {
        let arguments = ["a b", "", "ünïcode", "$HOME", "--flag=\"quoted\""]
        let result = try ChildProcess.run(
            "/bin/sh", ["-c", #"for a in "$@"; do printf '[%s]' "$a"; done"#, "sh"] + arguments)
        #expect(result.output == arguments.map { "[\($0)]" }.joined())
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGKILL])
    func aSignalThatEndsTheChildIsReported(signal: Int32) throws {
        let result = try shell("kill -\(signal) $$; sleep 60")
        #expect(result.termination == .signaled(signal))
        #expect(result.status == 128 + signal)
    }

    /// The child starts with default signal dispositions and no blocked signals, whatever this
    /// process did: SIGPIPE, ignored here, ends it.
    @Test func theChildGetsDefaultSignalHandling() throws {
        let result = try shell("yes | head -c 1")
        #expect(result.output == "y")
        let status = try shell("grep -E '^(SigBlk|SigIgn)' /proc/self/status").output
        let masks = Dictionary(
            uniqueKeysWithValues: status.split(separator: "\n").map { line in
                let parts = line.split(separator: "\t")
                return (String(parts[0]), UInt64(parts[1], radix: 16) ?? .max)
            })
        #expect(masks["SigBlk:"] == 0, "\(status)")
        for signal in [SIGPIPE, SIGTERM, SIGINT] {
            #expect(masks["SigIgn:"].map { $0 & (1 << (signal - 1)) } == 0, "signal \(signal) ignored: \(status)")
        }
    }

    /// Far more than a pipe holds, on both outputs at once: the child never blocks on a full pipe.
    @Test func outputLargerThanAPipeIsReadWhole() throws {
        let result = try shell("head -c 3000000 /dev/zero | tr '\\0' a; head -c 2000000 /dev/zero | tr '\\0' b >&2")
        #expect(result.termination == .exited(0))
        #expect(result.outputData.count == 3_000_000 && result.outputData.allSatisfy { $0 == UInt8(ascii: "a") })
        #expect(result.errorData.count == 2_000_000 && result.errorData.allSatisfy { $0 == UInt8(ascii: "b") })
    }

    @Test func inputIsDeliveredAndEnds() throws {
        let input = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        let result = try ChildProcess.run("/bin/cat", input: input)
        #expect(result.outputData == input)
        #expect(try ChildProcess.run("/bin/cat").outputData.isEmpty)
    }

    @Test func aFileCanBeTheInput() throws {
        let child = try ChildProcess("/usr/bin/head", ["-c", "5"], input: .file("/dev/zero"))
        #expect(try child.finish().outputData == Data(count: 5))
    }

    @Test func environmentIsAddedToThisProcesssAndWorkingDirectoryIsSet() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try shell(
            #"printf '%s\n%s\n%s\n' "$XDG_CONFIG_HOME" "$PATH" "$(pwd -P)""#,
            environment: ["XDG_CONFIG_HOME": directory.path], directory: directory.path)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                directory.path, ProcessInfo.processInfo.environment["PATH"] ?? "",
                directory.resolvingSymlinksInPath().path,
            ])
    }

    @Test func aMissingExecutableIsAClearError() throws {
        let path = "/nonexistent-\(UUID().uuidString)/program"
        #expect {
            try ChildProcess.run(path, ["argument"])
        } throws: { error in
            "\(error)" == "cannot start \(path) argument: No such file or directory"
        }
        #expect {
            try ChildProcess("/bin/sh", directory: "/nonexistent-\(UUID().uuidString)")
        } throws: { error in
            "\(error)".hasSuffix(": No such file or directory")
        }
    }

    /// A child that does not end by the deadline is killed and the wait fails, saying so and
    /// showing what the child printed.
    @Test func aChildStillRunningAtTheDeadlineIsKilled() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo started; exec sleep 600"])
        _ = try child.line { $0 == "started" }
        #expect {
            try child.wait(timeout: .milliseconds(200))
        } throws: { error in
            "\(error)".contains("Timed out after 0.2 seconds waiting for its end")
                && "\(error)".contains("it was still running and is killed") && "\(error)".contains("started")
        }
        #expect(try child.wait() == .signaled(SIGKILL))
    }

    /// A long-lived child: written to, read line by line as it answers, signalled, waited for.
    @Test func aLongLivedChildIsDrivenThroughItsInput() async throws {
        let script = #"trap 'echo bye; exit 7' TERM; echo ready; while read line; do echo "got $line"; done"#
        let child = try ChildProcess("/bin/sh", ["-c", script], input: .pipe)
        _ = try await child.line { $0 == "ready" }
        for index in 0..<3 {
            try child.write("line \(index)\n")
            #expect(try await child.line(after: 1 + index) { _ in true } == "got line \(index)")
        }
        #expect(child.isRunning)
        child.signal(SIGTERM)
        // Some shells run the trap at once, others only when `read` returns: send a line for
        // those, which may find the shell already gone.
        try? child.write("\n")
        #expect(try await child.wait() == .exited(7))
        _ = try await child.finish()
        #expect(child.lines().last == "bye")
        #expect(throws: ChildProcess.Failure.self) { try child.write("late\n") }
    }

    @Test func closingTheInputEndsAReader() throws {
        let child = try ChildProcess("/bin/cat", input: .pipe)
        try child.write("one\ntwo")
        child.closeInput()
        #expect(try child.finish().output == "one\ntwo")
    }

    @Test func waitingForALineThatNeverComesFailsWhenTheOutputEnds() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo other"])
        #expect {
            try child.line { $0 == "expected" }
        } throws: { error in
            "\(error)".contains("its output ended without the lines awaited") && "\(error)".contains("other")
        }
    }

    @Test func standardErrorLinesCanBeAwaited() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo first >&2; echo second >&2"])
        try child.waitForLines(.error) { $0.count == 2 }
        #expect(child.lines(.error) == ["first", "second"])
        #expect(child.lines().isEmpty)
    }

    /// A child left running when its last reference goes is killed and reaped, not left behind.
    @Test func aDroppedChildIsKilledAndReaped() throws {
        var child: ChildProcess? = try ChildProcess("/bin/sleep", ["600"])
        let id = try #require(child?.id)
        child = nil
        #expect(kill(id, 0) == -1 && errno == ESRCH)
    }
}
