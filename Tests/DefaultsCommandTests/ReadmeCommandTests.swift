import Foundation
import TestSupport
import Testing

/// The README's statements about the `defaults` command, checked against the program.
@Suite("README: the defaults command", .mayBlock)
struct ReadmeCommandTests {
    /// README.md, read from the package this file is in.
    private static func readme() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    @Test("The version printed by --version is the one the README names")
    func version() throws {
        let readme = try Self.readme()
        let stated = try #require(
            readme.firstMatch(of: #/`defaults --version` prints the package's version, `([0-9.]+)`/#))
        let sandbox = try CommandSandbox()
        let result = try sandbox.run("--version")
        #expect(result.status == 0)
        #expect(result.output == "\(stated.output.1)\n")
    }

    @Test("The output examples are what the commands print")
    func outputExamples() throws {
        let readme = try Self.readme()
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("write", "com.example.demo", "greeting", "-string", "hello").status == 0)
        let read = try sandbox.run("read", "com.example.demo")
        #expect(read.status == 0)
        #expect(readme.contains("```text\n\(read.output)```"), "README lacks the block:\n\(read.output)")

        let watch = try sandbox.start(["watch", "com.example.demo"])
        // `Watching …` on standard error says the watch has started.
        try watch.waitForLines(.error) { $0.count >= 1 }
        #expect(try sandbox.run("write", "com.example.demo", "volume", "-int", "7").status == 0)
        _ = try watch.line { $0 == "volume = 7;" }
        watch.signal(SIGTERM)
        try watch.wait()
        #expect(readme.contains("# watch prints: volume = 7;"))

        #expect(try sandbox.run("read-type", "com.example.demo", "volume").output == "Type is integer\n")
        #expect(readme.contains("`Type is integer`"))
    }

    @Test(
        "Usage errors exit 64 with the usage; other failures exit 1",
        arguments: [
            (["bogus"], 64), (["read", "--no-such-option"], 64), (["write"], 64),
            (["write", "com.example.demo", "greeting", "-int"], 64), (["read", "a", "b", "c"], 64),
            (["write", "com.example.demo", "volume", "-interger", "5"], 64), (["read-type", "com.example.demo"], 64),
            (["read", "com.example.missing"], 1), (["read", "com.example.demo", "missing"], 1),
            (["write", "com.example.demo", "volume", "-int", "five"], 1),
        ] as [([String], Int32)])
    func exitStatuses(arguments: [String], status: Int32) throws {
        let readme = try Self.readme()
        #expect(readme.contains("The exit\nstatus is 1, or 64 (`EX_USAGE`, with the usage)"))
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("write", "com.example.demo", "greeting", "hello").status == 0)
        let result = try sandbox.run(arguments)
        #expect(result.status == status, "\(arguments): \(result)")
        #expect(result.error.contains("Usage:") == (status == 64), "\(arguments): \(result)")
        #expect(result.output.isEmpty)
    }
}
