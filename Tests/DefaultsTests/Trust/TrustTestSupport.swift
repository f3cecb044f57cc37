import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The trust tests: each reproduces one way the file-backed suite lost a value, hung, wrote where
/// it should not, or stopped the host program.
enum Trust {}

extension ChildProcess {
    /// Runs the helper, killing it if it has not finished after `timeout` (a failure guard, not a
    /// timing assertion: a hang is what some of these tests look for). `nil` when it was killed.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], killingAfter timeout: Duration
    ) throws -> String? {
        let child = try start(arguments, environment: environment)
        let deadline = ContinuousClock.now + timeout
        while child.process.isRunning, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        if child.process.isRunning {
            kill(child.process.processIdentifier, SIGKILL)
            child.process.waitUntilExit()
            return nil
        }
        return String(decoding: child.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

/// What is at `path` itself (not following a link): `S_IFREG`, `S_IFLNK`…; `nil` if nothing.
func fileType(at path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT
}
