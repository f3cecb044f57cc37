import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock (`flock`) on a suite's sidecar lock file, held by one writer at a
/// time across processes from its read of the file to its write. Readers do not lock: every write
/// is an atomic rename, so a reader always sees a whole file.
///
/// Why a sidecar rather than the property list itself: each write replaces the property list
/// with a new file, and a suite that has never been written has none, so locking it would mean
/// creating an empty property list just to lock it, visible to Foundation and to every watcher.
///
/// The lock file is opened with `O_NOFOLLOW` and must be a regular file of the user's, so that a
/// planted link is never created through and another user's file is never waited on. After taking
/// the lock, the path is checked to still name the locked file: whoever removes the lock file
/// (`defaults delete`) does so holding it, and a waiter that then gets the removed file's lock
/// starts again on the new one.
///
/// A writer waits at most ``maximumWait`` for another to let go: a write holds the lock for
/// milliseconds, so a longer wait means a process that hangs holding it, and the write fails
/// instead of hanging too (its values stay in memory for the next flush).
package enum SuiteFileLock {
    /// How long a writer waits for the lock before its write fails.
    package static let maximumWait = Duration.seconds(10)

    /// Runs `body` holding the lock on `path`, waiting up to ``maximumWait`` for it. Creates the
    /// lock file (mode 0600) if needed.
    ///
    /// - Throws: ``Failure`` when the lock cannot be taken; what `body` throws otherwise.
    package static func withLock<Result>(path: String, _ body: () throws -> Result) throws -> Result {
        let fd: Int32
        do {
            fd = try lockedDescriptor(path, deadline: .now + maximumWait)
        } catch {
            throw Failure(error: error, isUncreatable: error.operation == uncreatable)
        }
        // Closing the descriptor releases the lock, also when `body` throws.
        defer { close(fd) }
        return try body()
    }

    /// The lock could not be taken.
    package struct Failure: Error, CustomStringConvertible {
        package var error: SystemCallError
        /// The lock file could not be created, as no file can be in an unwritable directory (as
        /// opposed to a lock file that is a link, or a lock that failed).
        package var isUncreatable: Bool
        package var description: String { "could not lock against other processes: \(error)" }
    }

    private static let uncreatable = "create lock file"

    private static func lockedDescriptor(
        _ path: String, deadline: ContinuousClock.Instant
    ) throws(SystemCallError) -> Int32 {
        while true {
            let fd = PosixFile.retrying { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600) }
            guard fd >= 0 else {
                throw SystemCallError(errno == ELOOP ? "open lock file (a link)" : uncreatable, path: path)
            }
            var info = stat()
            guard fstat(fd, &info) == 0, PosixFile.fileType(info) == S_IFREG else {
                close(fd)
                throw SystemCallError("open lock file (not a regular file)", path: path, code: EINVAL)
            }
            // Another user's lock file (planted in a shared directory) is theirs to hold forever.
            guard info.st_uid == geteuid() else {
                close(fd)
                throw SystemCallError("open lock file (another user's)", path: path, code: EPERM)
            }
            do {
                try lock(fd, path: path, deadline: deadline)
            } catch {
                close(fd)
                throw error
            }
            var current = stat()
            if lstat(path, &current) == 0, current.st_dev == info.st_dev, current.st_ino == info.st_ino {
                return fd
            }
            // Removed or replaced while we waited: lock the file that is there now.
            close(fd)
        }
    }

    /// Takes the exclusive lock on `fd`, trying again with growing pauses while another process
    /// holds it, until `deadline`. The pauses stay short (at most 1 ms), so that a writer that
    /// takes the lock again and again, with a moment between, cannot keep this one out.
    private static func lock(_ fd: Int32, path: String, deadline: ContinuousClock.Instant) throws(SystemCallError) {
        var pause = Duration.microseconds(50)
        while PosixFile.retrying({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            guard errno == EWOULDBLOCK else { throw SystemCallError("flock", path: path) }
            guard ContinuousClock.now < deadline else {
                throw SystemCallError(
                    "flock (held by another process throughout the wait)", path: path, code: EWOULDBLOCK)
            }
            usleep(useconds_t(pause / .microseconds(1)))
            pause = min(pause * 2, .milliseconds(1))
        }
    }
}
