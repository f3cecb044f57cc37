@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Migrations between processes", .mayBlock)
struct MigrationProcessesTests {
    private static func oldValues(count: Int) -> [String: Any] {
        var values: [String: Any] = [:]
        for index in 0..<count {
            values["old\(index)"] = index
        }
        return values
    }

    /// Whether `values` are the old file whole (every `old<i>`, no `new<i>`) or the migrated one
    /// whole (every `new<i>` as a real, no `old<i>`); `nil` for anything in between.
    private static func state(of values: [String: Any], count: Int) -> String? {
        guard values.count == count else { return nil }
        if (0..<count).allSatisfy({ values["old\($0)"] as? Int == $0 && !(values["old\($0)"] is Double) }) {
            return "before"
        }
        if (0..<count).allSatisfy({ index in
            values["new\(index)"].map { type(of: $0) == Double.self && ($0 as? Double) == Double(index) } == true
        }) {
            return "after"
        }
        return nil
    }

    @Test func twoProcessesStartingTogetherMigrateOnce() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(Self.oldValues(count: 2_000))
        let go = directory.url.appendingPathComponent("go").path
        let first = try TestHelper.start(["migrate-renamed", directory.path, "test", "2000", go])
        let second = try TestHelper.start(["migrate-renamed", directory.path, "test", "2000", go])
        _ = try first.line { $0 == "ready" }
        _ = try second.line { $0 == "ready" }
        #expect(FileManager.default.createFile(atPath: go, contents: Data()))
        let outputs = try [first.finish(), second.finish()].map(\.output)
        let writes = outputs.compactMap { output in
            output.split(separator: "\n").first { $0.hasPrefix("writes ") }.flatMap { Int($0.dropFirst(7)) }
        }
        #expect(writes.count == 2, "\(outputs)")
        #expect(writes.reduce(0, +) == 1, "each process's writes: \(writes)")
        #expect(Self.state(of: try directory.storedValues(), count: 2_000) == "after")
    }

    /// A process migrating 10,000 keys, killed with SIGKILL at random moments: the file always
    /// parses and is wholly before or wholly after.
    @Test func aMigrationKilledAtAnyMomentLeavesTheFileBeforeOrAfter() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let count = 10_000
        // A whole run first, timed only to spread the kills over it (and a little past it).
        try directory.writeOldFile(Self.oldValues(count: count))
        let clock = ContinuousClock()
        let start = clock.now
        let result = try TestHelper.run(["migrate-renamed", directory.path, "test", "\(count)"])
        let whole = clock.now - start
        #expect(result.output.contains("writes 1"), "\(result.output)")
        #expect(Self.state(of: try directory.storedValues(), count: count) == "after")
        let microseconds = whole.components.seconds * 1_000_000 + whole.components.attoseconds / 1_000_000_000_000
        let longest = UInt32(clamping: min(microseconds, 5_000_000))
        var states: [String: Int] = [:]
        for round in 0..<16 {
            try directory.writeOldFile(Self.oldValues(count: count))
            let child = try TestHelper.start(["migrate-renamed", directory.path, "test", "\(count)"])
            usleep(UInt32.random(in: 0...(longest + longest / 5)))
            child.kill()
            _ = try child.finish()
            let values: [String: Any]
            do {
                values = try directory.storedValues()
            } catch {
                Issue.record("round \(round): the file does not parse: \(error)")
                continue
            }
            let state = Self.state(of: values, count: count)
            #expect(state != nil, "round \(round): the file is neither wholly before nor wholly after")
            states[state ?? "neither", default: 0] += 1
        }
        CapturedLogs.note("migration kills over a \(whole) run: \(states)")
    }

    @Test func aRenameChainAcrossThreeVersions() throws {
        let directory = try FileSuiteTemporaryDirectory()
        // Version 1 stored `a`.
        try TestHelper.run(["filesuite-set", directory.path, "test", "a", "<integer>5</integer>"])
        // Version 2 renamed it `b`.
        #expect(try TestHelper.run(["migrate-chain", directory.path, "test", "2"]).output == "5\n")
        var stored = try directory.storedValues()
        #expect(stored["b"] as? Int == 5)
        #expect(stored["a"] == nil)
        // Version 3 renamed it `c`.
        #expect(try TestHelper.run(["migrate-chain", directory.path, "test", "3"]).output == "5\n")
        stored = try directory.storedValues()
        #expect(stored["c"] as? Int == 5)
        #expect(stored.count == 1)

        // From version 1 straight to version 3.
        try directory.writeOldFile(["a": 7])
        #expect(try TestHelper.run(["migrate-chain", directory.path, "test", "3"]).output == "7\n")
        stored = try directory.storedValues()
        #expect(stored["c"] as? Int == 7)
        #expect(stored.count == 1)
    }
}
