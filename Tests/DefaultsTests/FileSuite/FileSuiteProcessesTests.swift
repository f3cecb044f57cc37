@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several processes on one suite.
@Suite("FileSuite across processes", .mayBlock)
struct FileSuiteProcessesTests {
    /// R1: 4 processes write 2,500 distinct keys each, at once; all 10,000 are kept.
    @Test func concurrentWritersLoseNoKeys() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let children = try (0..<4).map { index in
            try TestHelper.start(["filesuite-write-keys", directory.path, "shared", "p\(index)-", "2500", "250"])
        }
        for child in children {
            let result = try child.finish()
            #expect(result.status == 0, "\(result)")
        }
        let stored = try directory.storedValues("shared")
        #expect(stored.count == 10_000)
        for process in 0..<4 {
            for index in stride(from: 0, to: 2500, by: 97) {
                #expect(stored["p\(process)-\(index)"] as? Int == index)
            }
        }
    }

    /// Another process's keys survive this process's writes, and this process's pending changes
    /// win over the file only for the keys it changed.
    @Test func writersMergeWithOtherProcessesChanges() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("merge")
        suite.set("mine", forKey: "local")
        try suite.flush()
        let child = try TestHelper.run(["filesuite-set", directory.path, "merge", "remote", "theirs"])
        #expect(child.status == 0, "\(child.error)")
        suite.set("mine again", forKey: "local2")
        try suite.flush()
        let stored = try directory.storedValues("merge")
        #expect(stored["remote"] as? String == "theirs")
        #expect(stored["local"] as? String == "mine")
        #expect(stored["local2"] as? String == "mine again")
        #expect(suite.object(forKey: "remote") as? String == "theirs")
    }

    /// A change written by another process reaches this process's change stream, for the keys
    /// whose values changed only.
    @Test func otherProcessesChangesReachTheChangeStream() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("watched")
        suite.set("same", forKey: "unchanged")
        try suite.flush()
        let recorder = FileSuiteChangeRecorder(suite)
        let child = try TestHelper.run(["filesuite-set", directory.path, "watched", "color", "blue"])
        #expect(child.status == 0, "\(child.error)")
        try await recorder.wait { $0.origin == .otherProcess && $0.keys.contains("color") }
        #expect(suite.object(forKey: "color") as? String == "blue")
        #expect(!recorder.changes.contains { $0.keys.contains("unchanged") })
    }

    /// Foundation's in-place writes are seen too.
    @Test func foundationWritesReachTheChangeStream() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("fromFoundation")
        let recorder = FileSuiteChangeRecorder(suite)
        let child = try TestHelper.run(
            ["foundation-write", "fromFoundation"], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(child.status == 0, "\(child.error)")
        try await recorder.wait { $0.origin == .otherProcess && $0.keys.contains("int") }
        #expect(suite.object(forKey: "int") as? Int == 42)
    }

    /// Values written without a flush are stored at normal exit…
    @Test func pendingWritesAreFlushedAtExit() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let child = try TestHelper.run(["filesuite-set", directory.path, "exit", "key", "value", "--no-flush"])
        #expect(child.status == 0, "\(child.error)")
        #expect(try directory.storedValues("exit")["key"] as? String == "value")
    }

    /// …and when the process is ended by SIGTERM or SIGINT, which still end it.
    @Test(arguments: [SIGTERM, SIGINT])
    func pendingWritesAreFlushedOnTerminationSignals(signal: Int32) async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let child = try TestHelper.start(["filesuite-wait-signal", directory.path, "signal", "key", "value"])
        _ = try await child.line { $0 == "ready" }
        child.signal(signal)
        #expect(try await child.wait() == .signaled(signal))
        #expect(try directory.storedValues("signal")["key"] as? String == "value")
    }
}
