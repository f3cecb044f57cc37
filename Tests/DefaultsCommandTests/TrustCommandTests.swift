import DefaultsPropertyList
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The command's part of the trust issue: edits read and write holding the lock, `delete` leaves
/// nothing behind, and what the library judges damaged or refuses, the command does too.
@Suite struct TrustCommandTests {
    /// Item 7: ten `-array-add` at once keep all ten elements.
    @Test func parallelArrayAddsAreAllKept() throws {
        let sandbox = try CommandSandbox()
        let commands = try (0..<10).map { index in
            try sandbox.start(["write", "com.example.list", "items", "-array-add", "\(index)"])
        }
        for command in commands {
            command.process.waitUntilExit()
            let error = String(decoding: command.error.finish(), as: UTF8.self)
            #expect(command.process.terminationStatus == 0, "\(error)")
        }
        let items = try #require(try sandbox.storedValues("com.example.list")["items"] as? [String])
        #expect(items.sorted() == (0..<10).map(String.init).sorted())
    }

    /// Ten `-dict-add` and ten key renames at once, likewise.
    @Test func parallelDictionaryAddsAndRenamesAreAllKept() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(Dictionary(uniqueKeysWithValues: (0..<10).map { ("old\($0)", $0) }), as: "com.example.d")
        var commands = try (0..<10).map { index in
            try sandbox.start(["write", "com.example.d", "table", "-dict-add", "k\(index)", "\(index)"])
        }
        commands += try (0..<10).map { index in
            try sandbox.start(["rename", "com.example.d", "old\(index)", "new\(index)"])
        }
        for command in commands {
            command.process.waitUntilExit()
            #expect(command.process.terminationStatus == 0)
        }
        let values = try sandbox.storedValues("com.example.d")
        #expect((values["table"] as? [String: Any])?.count == 10)
        #expect(Set(values.keys) == Set(["table"] + (0..<10).map { "new\($0)" }))
    }

    /// `defaults delete domain` removes the file and its lock file: nothing is left.
    @Test func deletingADomainLeavesNoFile() throws {
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("write", "com.example.gone", "k", "v").status == 0)
        #expect(try sandbox.fileNames().contains("com.example.gone.plist"))
        let result = try sandbox.run("delete", "com.example.gone")
        #expect(result.status == 0, "\(result)")
        #expect(try sandbox.fileNames().isEmpty)
        #expect(try sandbox.run("read", "com.example.gone").status == 1)
    }

    /// An empty file is an empty domain for the command as for the library: it reads as absent
    /// and a write goes ahead.
    @Test func emptyFileIsAnEmptyDomain() throws {
        let sandbox = try CommandSandbox()
        try Data().write(to: sandbox.fileURL("com.example.empty"))
        let read = try sandbox.run("read", "com.example.empty")
        #expect(read.status == 1 && read.error.contains("does not exist"), "\(read)")
        #expect(try sandbox.run("write", "com.example.empty", "k", "v").status == 0)
        #expect(try sandbox.storedValues("com.example.empty")["k"] as? String == "v")
        #expect(try sandbox.fileNames().allSatisfy { !$0.contains("corrupt") })
    }

    /// Item 5 in the command: invalid UTF-8 is damage, reported and left alone.
    @Test func invalidUTF8IsReportedAsDamaged() throws {
        let sandbox = try CommandSandbox()
        var bytes = Array(#"<plist version="1.0"><dict><key>name</key><string>caf"#.utf8)
        bytes.append(0xE9)
        bytes += Array("</string></dict></plist>".utf8)
        try Data(bytes).write(to: sandbox.fileURL("com.example.latin"))
        let result = try sandbox.run("read", "com.example.latin")
        #expect(result.status == 1 && result.error.contains("is not a valid property list"), "\(result)")
        #expect(sandbox.bytes("com.example.latin") == Data(bytes))
    }

    /// Item 3 in the command: a FIFO in a domain's place is reported without waiting on it.
    @Test func fifoIsReportedWithoutBlocking() throws {
        let sandbox = try CommandSandbox()
        try #require(mkfifo(sandbox.fileURL("com.example.fifo").path, 0o600) == 0)
        let command = try sandbox.start(["read", "com.example.fifo"])
        // A failure guard, not a timing assertion: the command either ends or hangs.
        let deadline = ContinuousClock.now + .seconds(120)
        while command.process.isRunning, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        if command.process.isRunning {
            Issue.record("defaults read blocked on the FIFO")
            _ = command.stop(signal: SIGKILL)
            return
        }
        command.process.waitUntilExit()
        let error = String(decoding: command.error.finish(), as: UTF8.self)
        #expect(command.process.terminationStatus == 1)
        #expect(error.contains("is a FIFO, not a property-list file"), "\(error)")
    }

    /// `import` reads its source bounded, and only a regular file at a path: a FIFO with no writer
    /// and `/dev/zero` (as a path, or as standard input for `-`) end with a clear error, and the
    /// domain is left as it was. Run with a memory limit, so that an unbounded read fails quickly
    /// instead of filling the machine.
    @Test func importOfAFIFOOrAnEndlessSourceEnds() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["kept": "yes"], as: "com.example.target")
        let before = sandbox.bytes("com.example.target")
        let fifo = sandbox.directory.appendingPathComponent("source.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let cases: [(arguments: String, input: String, message: String)] = [
            ("\(fifo)", "/dev/null", "\(fifo) is a FIFO, not a regular file"),
            ("/dev/zero", "/dev/null", "/dev/zero is a device, not a regular file"),
            ("-", "/dev/zero", "it is larger than 64 MB"),
        ]
        for (source, input, message) in cases {
            let result = try runLimited(sandbox, ["import", "com.example.target", source], input: input)
            guard let result else {
                Issue.record("defaults import \(source) < \(input) did not end")
                continue
            }
            #expect(result.status == 1, "\(source): \(result.error)")
            #expect(result.error == "Could not read data from \(source): \(message)\n", "\(source)")
        }
        #expect(sandbox.bytes("com.example.target") == before)
    }

    /// Runs the command under a 1 GB memory limit with `input` as its standard input; `nil` when
    /// it had to be killed (the timeout is a failure guard only).
    private func runLimited(_ sandbox: CommandSandbox, _ arguments: [String], input: String) throws -> (
        status: Int32, error: String
    )? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments =
            ["-c", "ulimit -v 1048576; exec \"$0\" \"$@\"", CommandSandbox.executableURL.path] + arguments
        process.environment = sandbox.environment
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        process.standardOutput = FileHandle.nullDevice
        let error = Pipe()
        process.standardError = error
        try process.run()
        let collector = PipeCollector(error.fileHandleForReading)
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            _ = collector.finish()
            return nil
        }
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: collector.finish(), as: UTF8.self))
    }
}
