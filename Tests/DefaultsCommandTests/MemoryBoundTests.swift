import Foundation
import TestSupport
import Testing

/// Hostile files cost memory in proportion to their size, never more: opening, reading, printing
/// and importing each stay within 16 times the input's size and 32 MB, measured as the peak
/// resident memory of the real process (`wait4`).
@Suite(.mayBlock) struct MemoryBoundTests {
    /// The budget for an input of `size` bytes.
    static func budget(_ size: Int) -> Int { size * 16 + (32 << 20) }

    /// What one run did, and its peak resident memory.
    struct Measured {
        var result: ChildProcess.Result
        var peak: Int
    }

    /// Runs `program arguments…` through the test helper's `peak-memory` (see there why), in the
    /// sandbox's environment.
    static func measure(_ sandbox: CommandSandbox, _ program: String, _ arguments: [String]) throws -> Measured {
        let result = try ChildProcess.run(
            builtExecutable("DefaultsTestHelper"), ["peak-memory", program] + arguments,
            environment: sandbox.environment)
        let line = result.error.split(separator: "\n").last { $0.hasPrefix("peak-resident-bytes: ") }
        let peak = line.flatMap { Int($0.dropFirst("peak-resident-bytes: ".count)) } ?? .max
        return Measured(result: result, peak: peak)
    }

    /// Runs the `defaults` command, measured.
    static func defaults(_ sandbox: CommandSandbox, _ arguments: String...) throws -> Measured {
        try measure(sandbox, CommandSandbox.executable, arguments)
    }

    /// `{ k = (true, true, …) }`: `count` one-byte references to one `true`.
    static func sharedTrue(count: Int) -> Data {
        sharedReferencePlist(count: count, sharedObject: [0x09])
    }

    @Test(arguments: [1 << 20, 8 << 20])
    func sharedScalarsCostNoMoreThanTheBudget(count: Int) throws {
        let sandbox = try CommandSandbox()
        let bomb = Self.sharedTrue(count: count)
        let budget = Self.budget(bomb.count)
        let domain = "com.example.bomb"
        let source = sandbox.directory.appendingPathComponent("bomb.plist")
        try bomb.write(to: source)

        let imported = try Self.defaults(sandbox, "import", domain, source.path)
        #expect(imported.result.termination == .exited(1), "\(imported.result)")
        #expect(imported.peak <= budget, "import: \(imported.peak) > \(budget)")
        #expect(sandbox.bytes(domain) == nil, "a refused import writes nothing")

        let printed = try Self.defaults(sandbox, "read", "--path", source.path)
        #expect(printed.result.termination == .exited(1), "\(printed.result)")
        #expect(printed.result.error.contains("expand"), "\(printed.result.error)")
        #expect(printed.peak <= budget, "read: \(printed.peak) > \(budget)")

        // As a suite's own file, opened by a program: moved aside, defaults served.
        try bomb.write(to: sandbox.fileURL(domain))
        let opened = try Self.measure(
            sandbox, builtExecutable("DefaultsTestHelper"), ["filesuite-get", sandbox.path, domain, "k"])
        #expect(opened.result.termination == .exited(0), "\(opened.result)")
        #expect(opened.result.output == "(absent)\n")
        #expect(opened.peak <= budget, "open: \(opened.peak) > \(budget)")
        #expect(try sandbox.fileNames().contains { $0.hasPrefix(domain + ".plist.corrupt-") })
    }

    /// 20 MB of text whose every character XML must escape: imported, it would make an 80 MB file,
    /// over the 64 MB a suite's file may hold. Refused, without building it.
    @Test func importOfTextThatWouldEncodeOverTheLimitIsRefusedWithinTheBudget() throws {
        let sandbox = try CommandSandbox()
        var text = Data("{ k = \"".utf8)
        text.append(Data(repeating: UInt8(ascii: "<"), count: 20 << 20))
        text.append(Data("\"; }\n".utf8))
        let source = sandbox.directory.appendingPathComponent("escapes.plist")
        try text.write(to: source)
        let imported = try Self.defaults(sandbox, "import", "com.example.escapes", source.path)
        #expect(imported.result.termination == .exited(1), "\(imported.result)")
        #expect(imported.result.error.contains("64 MB"), "\(imported.result.error)")
        #expect(sandbox.bytes("com.example.escapes") == nil)
        let budget = Self.budget(text.count)
        #expect(imported.peak <= budget, "import: \(imported.peak) > \(budget)")
    }

    /// The budget is not a refusal of large files: a 12 MB domain of 200,000 distinct values is
    /// imported, read back and opened within it.
    @Test func aLargeOrdinaryDomainIsReadWithinTheBudget() throws {
        let sandbox = try CommandSandbox()
        var values: [String: Any] = [:]
        for index in 0..<200_000 {
            values["key-\(index)"] = "value number \(index) of an ordinary domain"
        }
        try sandbox.store(values, as: "com.example.large")
        let size = try #require(sandbox.bytes("com.example.large")?.count)
        let budget = Self.budget(size)
        let printed = try Self.defaults(sandbox, "read", "com.example.large")
        #expect(printed.result.output.contains("value number 199999 of an ordinary domain"))
        #expect(printed.peak <= budget, "read: \(printed.peak) > \(budget)")
        let opened = try Self.measure(
            sandbox, builtExecutable("DefaultsTestHelper"),
            ["filesuite-get", sandbox.path, "com.example.large", "key-5"])
        #expect(opened.result.output.contains("value number 5 of an ordinary domain"), "\(opened.result)")
        #expect(opened.peak <= budget, "open: \(opened.peak) > \(budget)")
    }
}
