import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading the suite's file when it may be damaged: a file that does not parse is moved aside to
/// a named backup, never overwritten; a directory or an unreadable file is left alone and blocks
/// writes; either way the suite goes on with its defaults and in-memory values.
extension FileSuite {
    /// What reading the file found.
    enum ReadOutcome {
        case values([String: Any], FileIdentity)
        /// No file (or a damaged one, now moved aside).
        case absent
        case directory(FileIdentity)
        /// The file exists but could not be read (permissions, I/O error); it is left in place.
        case unreadable(any Error)

        var identity: FileIdentity? {
            if case .values(_, let identity) = self { identity } else { nil }
        }
    }

    /// How often a file that does not parse is read again before it is judged damaged.
    static let readAttempts = 4
    /// The pause between those reads: Foundation rewrites the file in place, so a reader can catch
    /// it half-written.
    static let rereadPause: Duration = .milliseconds(20)

    /// The values stored at `location` when the suite is opened, and the problems met.
    static func load(_ location: FileSuiteLocation, suiteName: String, fileURL: URL) -> (
        values: [String: Any], identity: FileIdentity?, problems: [SuiteError]
    ) {
        let (outcome, problems) = read(location, suiteName: suiteName, fileURL: fileURL, holdingLock: false)
        switch outcome {
        case .values(let values, let identity):
            return (values, identity, problems)
        case .absent, .unreadable:
            return ([:], nil, problems)
        case .directory:
            return ([:], nil, problems + [directoryProblem(location, suiteName: suiteName, fileURL: fileURL)])
        }
    }

    /// Reads the file now, reporting what was moved aside or could not be read.
    func readCurrent(holdingLock: Bool) -> ReadOutcome {
        let (outcome, problems) = Self.read(location, suiteName: name, fileURL: fileURL, holdingLock: holdingLock)
        for problem in problems {
            report(problem)
        }
        return outcome
    }

    static func directoryProblem(_ location: FileSuiteLocation, suiteName: String, fileURL: URL) -> SuiteError {
        SuiteError(
            suite: suiteName, kind: .unreadable, fileURL: fileURL,
            message:
                "\(location.path) is a directory, not a property list; it is left in place, the suite goes on with its defaults, and writes fail until it is removed"
        )
    }

    private static func read(
        _ location: FileSuiteLocation, suiteName: String, fileURL: URL, holdingLock: Bool
    ) -> (ReadOutcome, [SuiteError]) {
        var lastFailure: (identity: FileIdentity, data: Data)?
        var attempts = 0
        var reads = 0
        while true {
            reads += 1
            let contents: PosixFile.Contents
            do {
                contents = try PosixFile.read(location.path)
            } catch {
                let problem = SuiteError(
                    suite: suiteName, kind: .unreadable, fileURL: fileURL,
                    message:
                        "\(location.path) could not be read (\(error)); it is left in place and not overwritten, and the suite goes on with its defaults"
                )
                return (.unreadable(error), [problem])
            }
            switch contents {
            case .absent:
                return (.absent, [])
            case .directory(let identity):
                return (.directory(identity), [])
            case .file(let identity, let data):
                let reason: DecodingProblem
                switch decode(data) {
                case .success(let values):
                    return (.values(values, identity), [])
                case .failure(let problem):
                    reason = problem
                }
                attempts += 1
                let isUnchanged = lastFailure.map { $0.identity == identity && $0.data == data } ?? false
                if !isUnchanged, attempts < readAttempts {
                    lastFailure = (identity, data)
                    sleep(for: rereadPause)
                    continue
                }
                let moved: MoveAside
                do {
                    moved =
                        try holdingLock
                        ? moveAside(location, identity: identity)
                        : FileLock.withLock(path: location.lockPath) { try moveAside(location, identity: identity) }
                } catch {
                    let problem = SuiteError(
                        suite: suiteName, kind: .unreadable, fileURL: fileURL,
                        message:
                            "\(location.path) is not a valid suite (\(reason)) and could not be moved aside (\(error)); it is left in place and not overwritten, and the suite goes on with its defaults"
                    )
                    return (.unreadable(error), [problem])
                }
                switch moved {
                case .moved(let backupPath):
                    let problem = SuiteError(
                        suite: suiteName, kind: .unreadable, fileURL: fileURL,
                        backupURL: URL(fileURLWithPath: backupPath, isDirectory: false),
                        message:
                            "\(location.path) is not a valid suite (\(reason)); it was moved to \(backupPath) and the suite goes on with its defaults"
                    )
                    return (.absent, [problem])
                case .changed where reads < 5 * readAttempts:
                    // Another writer replaced the file meanwhile: judge the new one.
                    lastFailure = nil
                    attempts = 0
                case .changed:
                    let problem = SuiteError(
                        suite: suiteName, kind: .unreadable, fileURL: fileURL,
                        message:
                            "\(location.path) keeps changing into something that is not a valid suite (\(reason)); it is left in place and the suite goes on with its defaults"
                    )
                    return (.unreadable(reason), [problem])
                }
            }
        }
    }

    private enum MoveAside {
        case moved(String)
        case changed
    }

    /// Renames the damaged file to `<file>.corrupt-<UTC timestamp>` (with `-2`, `-3`… if taken),
    /// unless it is no longer the version judged damaged. Runs holding the file lock.
    private static func moveAside(_ location: FileSuiteLocation, identity: FileIdentity) throws -> MoveAside {
        guard try PosixFile.identity(at: location.path) == identity else { return .changed }
        let base = location.path + ".corrupt-" + timestamp()
        var candidate = base
        var number = 1
        while try PosixFile.identity(at: candidate) != nil {
            number += 1
            candidate = base + "-\(number)"
        }
        guard rename(location.path, candidate) == 0 else { throw SystemCallError("rename", path: location.path) }
        try PosixFile.syncDirectory(of: location.path)
        return .moved(candidate)
    }

    /// The current UTC time as `20261122T011500Z`.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR {
            request = remaining
        }
    }
}
