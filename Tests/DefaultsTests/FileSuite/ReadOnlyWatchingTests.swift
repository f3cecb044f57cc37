@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

/// A program that only reads (no observer, no write) starts no watcher while it is young, and
/// sees other processes' changes once it has lived past the suite's watching delay.
@Suite("FileSuite watching a program that only reads", .mayBlock)
struct ReadOnlyWatchingTests {
    @Test func aReaderSeesAnotherProcesssWriteOnceItReadsAfterTheDelay() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let setUp = try TestHelper.run(["filesuite-set", directory.path, "reader", "color", "red"])
        #expect(setUp.status == 0, "\(setUp.error)")
        let suite = directory.suite("reader")
        let color = Defaults.Key<String>("color", default: "none", suite: suite)
        #expect(Defaults[color] == "red")
        #expect(!suite.isWatching, "a young reader starts no watcher")

        try await Task.sleep(for: FileSuite.watchingDelay + .milliseconds(100))
        // This read is due: it starts watching (off this thread), which reads what changed.
        _ = Defaults[color]
        try await waitUntil("watching to begin") { suite.isWatching }
        let child = try TestHelper.run(["filesuite-set", directory.path, "reader", "color", "blue"])
        #expect(child.status == 0, "\(child.error)")
        try await waitUntil("the other process's value") { Defaults[color] == "blue" }
    }
}
