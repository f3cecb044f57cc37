@_spi(Testing) import Defaults
import Foundation
import Synchronization
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

        /// Runs `body` on another thread; `false` if it has not finished after a generous time
        /// (a deadlock: the thread is then left behind).
        func finishes(_ body: @escaping @Sendable () -> Void) async -> Bool {
            let done = Mutex(false)
            Thread {
                body()
                done.withLock { $0 = true }
            }.start()
            return await fileSuiteEventually(timeout: .seconds(60)) { done.withLock { $0 } }
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
            #expect(await finishes { try? suite.flush() }, "the handler deadlocked")
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
            #expect(await finishes { suite.reload() }, "the handler deadlocked")
            #expect(calls.count.withLock { $0 } == 1)
        }
    }
}
