import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The command's part of the trust issue: edits read and write holding the lock, `delete` leaves
/// nothing behind, and what the library judges damaged or refuses, the command does too.
@Suite(.mayBlock) struct TrustCommandTests {
    /// Item 7: ten `-array-add` at once keep all ten elements.
    @Test func parallelArrayAddsAreAllKept() throws {
        let sandbox = try CommandSandbox()
        let commands = try (0..<10).map { index in
            try sandbox.start(["write", "com.example.list", "items", "-array-add", "\(index)"])
        }
        for command in commands {
            let result = try command.finish()
            #expect(result.status == 0, "\(result)")
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
            let result = try command.finish()
            #expect(result.status == 0, "\(result)")
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
        // Blocking on the FIFO would hang it: the run's deadline kills it and fails the test.
        let result = try sandbox.run("read", "com.example.fifo")
        #expect(result.status == 1)
        #expect(result.error.contains("is a FIFO, not a property-list file"), "\(result)")
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
            #expect(result.status == 1, "\(source): \(result.error)")
            #expect(result.error == "Could not read data from \(source): \(message)\n", "\(source)")
        }
        #expect(sandbox.bytes("com.example.target") == before)
    }

    /// Runs the command under a 1 GB memory limit with `input` as its standard input. An endless
    /// read would hang it: the deadline kills it and fails the test.
    private func runLimited(_ sandbox: CommandSandbox, _ arguments: [String], input: String) throws
        -> ChildProcess.Result
    {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "ulimit -v 1048576; exec \"$0\" \"$@\"", CommandSandbox.executable] + arguments,
            environment: sandbox.environment, input: .file(input))
        return try child.finish()
    }
}
