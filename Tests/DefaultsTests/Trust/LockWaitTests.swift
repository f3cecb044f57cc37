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
        @Test func aProcessHangingWithTheLockFailsTheFlushAfterTheWait() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let holder = try TestHelper.start(["trust-hold-lock", directory.path + "/.test.plist.lock"])
            _ = try holder.line { $0 == "locked" }

            let suite = directory.suite()
            suite.set(7, forKey: "volume")
            let started = ContinuousClock.now
            do {
                try suite.flush()
                Issue.record("a flush succeeded while another process held the lock")
            } catch let error as DefaultsError {
                #expect(error.kind == .lockFailed)
                #expect(error.message.contains("held by another process"))
            }
            // Bounded below by the wait itself; the machine's speed only lengthens it.
            #expect(ContinuousClock.now - started >= .seconds(9))
            #expect(suite.object(forKey: "volume") as? Int == 7)
            #expect(suite.problems.last?.kind == .lockFailed)
            #expect(!FileManager.default.fileExists(atPath: directory.fileURL().path))

            holder.kill()
            try suite.flush()
            #expect(try directory.storedValues()["volume"] as? Int == 7)
        }

        @Test func aWriterWaitsForAnotherThatLetsGo() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let holder = try TestHelper.start(["trust-hold-lock", directory.path + "/.test.plist.lock"])
            _ = try holder.line { $0 == "locked" }
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
            let started = ContinuousClock.now
            do {
                try suite.flush()
                Issue.record("a flush used another user's lock file")
            } catch let error as DefaultsError {
                #expect(error.kind == .lockFailed)
                #expect(error.message.contains("another user's"))
            }
            // Refused, not waited on (the wait is 10 s).
            #expect(ContinuousClock.now - started < .seconds(9))
            #expect(suite.object(forKey: "a") as? Int == 1)
            #expect(!FileManager.default.fileExists(atPath: directory.fileURL().path))
        }
    }
}
