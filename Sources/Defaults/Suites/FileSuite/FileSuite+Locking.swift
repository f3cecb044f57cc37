import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock (`flock`) on a suite's sidecar lock file, held by one writer at a
/// time across processes while it merges with the file and replaces it. Readers do not lock:
/// every write is an atomic rename, so a reader always sees a whole file.
enum FileLock {
    /// Runs `body` holding the lock on `path`, blocking until it is free. Creates the lock file
    /// (mode 0600) if needed.
    static func withLock<Result>(path: String, _ body: () throws -> Result) throws -> Result {
        let fd = PosixFile.retrying { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw SystemCallError("open lock file", path: path) }
        // Closing the descriptor releases the lock, also when `body` throws.
        defer { close(fd) }
        guard PosixFile.retrying({ flock(fd, LOCK_EX) }) == 0 else { throw SystemCallError("flock", path: path) }
        return try body()
    }
}

extension FileSuite {
    /// Runs `body` holding the suite's cross-process lock.
    func withFileLock<Result>(_ body: () throws -> Result) throws -> Result {
        var isLocked = false
        do {
            return try FileLock.withLock(path: location.lockPath) {
                isLocked = true
                return try body()
            }
        } catch let error as SystemCallError where !isLocked {
            // A lock file that cannot be created means the directory cannot be written either.
            throw SuiteError(
                suite: name, kind: error.operation == "flock" ? .lockFailed : .writeFailed, fileURL: fileURL,
                message: "could not lock \(location.lockPath) against other processes: \(error)"
            )
        }
    }
}
