@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// A writer never waits forever on a suite's lock: a process that hangs holding it, or another
    /// user's lock file in a shared directory, makes the flush fail with a lock problem; the
    /// values stay in memory and are written once the lock is free.
    @Suite struct LockWaitTests {
        /// Another process holding the suite's lock in `directory` until killed.
        private func lockHolder(in directory: FileSuiteTemporaryDirectory) throws -> ChildProcess {
            let holder = try TestHelper.start(["trust-hold-lock", directory.path + "/.test.plist.lock"])
            _ = try holder.line { $0 == "locked" }
            return holder
        }

        /// Flushes `suite`, which must fail as `lockFailed` saying `words`; returns how long it took.
        private func failedFlush(_ suite: FileSuite, saying words: String) -> Duration {
            let started = ContinuousClock.now
            do {
                try suite.flush()
                Issue.record("a flush succeeded without its lock")
            } catch let error as DefaultsError {
                #expect(error.kind == .lockFailed)
                #expect(error.message.contains(words), "\(error.message)")
            } catch {
                Issue.record("\(error)")
            }
            return ContinuousClock.now - started
        }

        @Test func aProcessHangingWithTheLockFailsTheFlushAfterTheWait() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let holder = try lockHolder(in: directory)

            let suite = directory.suite()
            suite.set(7, forKey: "volume")
            // Bounded below by the wait itself; the machine's speed only lengthens it.
            #expect(failedFlush(suite, saying: "held by another process") >= .seconds(9))
            #expect(suite.object(forKey: "volume") as? Int == 7)
            #expect(suite.problems.last?.kind == .lockFailed)
            #expect(!FileManager.default.fileExists(atPath: directory.fileURL().path))

            holder.kill()
            try suite.flush()
            #expect(try directory.storedValues()["volume"] as? Int == 7)
        }

        @Test func aWriterWaitsForAnotherThatLetsGo() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let holder = try lockHolder(in: directory)
            Thread {
                usleep(300_000)
                holder.kill()
            }.start()

            let suite = directory.suite()
            suite.set("after the wait", forKey: "greeting")
            try suite.flush()
            #expect(try directory.storedValues()["greeting"] as? String == "after the wait")
        }

        @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
        func anotherUsersLockFileIsRefusedAtOnce() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let lockPath = directory.path + "/.test.plist.lock"
            try #require(FileManager.default.createFile(atPath: lockPath, contents: nil))
            try #require(chmod(lockPath, 0o666) == 0 && chown(lockPath, 65534, 65534) == 0)

            let suite = directory.suite()
            suite.set(1, forKey: "a")
            // Refused, not waited on (the wait is 10 s).
            #expect(failedFlush(suite, saying: "another user's") < .seconds(9))
            #expect(suite.object(forKey: "a") as? Int == 1)
            #expect(!FileManager.default.fileExists(atPath: directory.fileURL().path))
        }
    }
}
