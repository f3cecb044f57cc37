@_spi(Testing) import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

extension Trust {
    /// Item 10: problems are reported once the suite's locks are released, so that a handler may
    /// flush or reload the suite.
    @Suite struct ProblemReportingTests {
        final class Calls: Sendable {
            let count = Mutex(0)

            /// Counts a call; whether it is the first.
            func isFirst() -> Bool {
                count.withLock { count in
                    count += 1
                    return count == 1
                }
            }
        }

        /// Runs `body` on another thread and waits for it to finish; fails if it has not after a
        /// generous time (a deadlock, named by `what`: the thread is then left behind).
        func finishes(
            _ what: String, fileID: String = #fileID, line: Int = #line, _ body: @escaping @Sendable () -> Void
        )
            async throws
        {
            let done = Mutex(false)
            Thread {
                body()
                done.withLock { $0 = true }
            }.start()
            try await waitUntil("the call to return: \(what) deadlocked", fileID: fileID, line: line) {
                done.withLock { $0 }
            }
        }

        @Test func handlerMayFlushAndReloadAfterAFailedWrite() async throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite(coalescingDelay: .seconds(3600))
            let calls = Calls()
            suite.onProblem = { [weak suite] _ in
                // Once: a flush that fails again reports again.
                guard calls.isFirst(), let suite else { return }
                try? suite.flush()
                suite.reload()
            }
            // A directory in the file's place makes the write fail.
            try FileManager.default.createDirectory(at: directory.fileURL(), withIntermediateDirectories: true)
            suite.set(1, forKey: "a")
            try await finishes("the handler") { try? suite.flush() }
            #expect(calls.count.withLock { $0 } >= 1)
        }

        @Test func handlerMayFlushAndReloadAfterADamagedFileIsMovedAside() async throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite()
            let calls = Calls()
            suite.onProblem = { [weak suite] _ in
                guard calls.isFirst(), let suite else { return }
                try? suite.flush()
                suite.reload()
            }
            suite.set(1, forKey: "a")
            try suite.flush()
            try Data("garbage {{".utf8).write(to: directory.fileURL())
            try await finishes("the handler") { suite.reload() }
            #expect(calls.count.withLock { $0 } == 1)
        }

        /// Inside the body of `Defaults.modify` (which holds the suite's locks), setting another
        /// key calls that key's observers at once: an observer that reloads or flushes the suite,
        /// or modifies another key, must not wait for the locks its own thread holds.
        @Test func observerCalledFromAModifyBodyMayReloadFlushAndModify() async throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite(coalescingDelay: .seconds(3600))
            let count = Defaults.Key<Int>("count", default: 0, suite: suite)
            let mirror = Defaults.Key<Int>("mirror", default: 0, suite: suite)
            let seen = Defaults.Key<Int>("seen", default: 0, suite: suite)
            let token = suite.changes.addObserver(forKeys: ["mirror"]) { _ in
                suite.reload()
                try? suite.flush()
                Defaults.modify(seen) { $0 += 1 }
            }
            defer { suite.changes.removeObserver(token) }
            try await finishes("the observer") {
                Defaults.modify(count) { value in
                    value += 1
                    Defaults[mirror] = value
                }
            }
            #expect(Defaults[count] == 1 && Defaults[mirror] == 1 && Defaults[seen] == 1)
            try suite.flush()
            let stored = try directory.storedValues()
            #expect(stored["count"] as? Int == 1 && stored["mirror"] as? Int == 1 && stored["seen"] as? Int == 1)
        }

        /// Inside the body of `modify`, a value that is not a property-list object is reported at
        /// once: a handler that flushes and reloads must not wait for the locks its thread holds.
        @Test func handlerCalledFromAModifyBodyMayFlushAndReload() async throws {
            struct NotAPropertyList {}
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite(coalescingDelay: .seconds(3600))
            let calls = Calls()
            suite.onProblem = { [weak suite] _ in
                guard calls.isFirst(), let suite else { return }
                try? suite.flush()
                suite.reload()
            }
            try await finishes("the handler") {
                suite.modify(forKey: "a") { (value: inout Any?) in
                    suite.set(NotAPropertyList(), forKey: "b")
                    value = 1
                }
            }
            #expect(calls.count.withLock { $0 } == 1)
            #expect(try directory.storedValues()["a"] as? Int == 1)
        }

        /// `reload()` returns with what it found in `problems`, also when the watcher's own reload
        /// of the same change got there first and was still reporting it.
        @Test func reloadReturnsWithTheProblemsItFoundVisible() throws {
            for attempt in 0..<20 {
                let directory = try FileSuiteTemporaryDirectory()
                let suite = directory.suite()
                suite.set(attempt, forKey: "a")
                try suite.flush()
                // Another program damages the file; the watcher sees it at once, and so does reload.
                try Data("not a property list".utf8).write(to: directory.fileURL(), options: .atomic)
                suite.reload()
                #expect(suite.problems.count == 1, "attempt \(attempt): \(suite.problems)")
                #expect(suite.problems.first?.backupURL != nil, "attempt \(attempt)")
            }
        }
    }
}
