import DefaultsFiles
import DefaultsPropertyList
import Foundation

/// Reading the suite's file when it may be damaged (``SuiteFile/readMovingDamagedAside(holdingLock:)``):
/// a file that does not parse is moved aside to a named backup, never overwritten; a directory,
/// FIFO, device or unreadable file is left alone and blocks writes; either way the suite goes on
/// with its defaults and in-memory values, and says so.
extension FileSuite {
    /// What reading the file found.
    enum ReadOutcome {
        case values([String: PropertyListValue], FileIdentity)
        /// No file (or a damaged one, now moved aside).
        case absent
        /// Something that is left in place and must not be replaced: not a regular file, or a file
        /// that could not be read. `message` says what, for the write that it stops.
        case blocked(identity: FileIdentity?, message: String)
    }

    /// Reads the file now, moving a damaged one aside. Problems are appended to `problems`, for
    /// the caller to report once it holds no lock.
    static func readMovingDamagedAside(
        _ file: SuiteFile, suiteName: String, fileURL: URL, holdingLock: Bool,
        problems: inout [DefaultsError]
    ) -> ReadOutcome {
        func problem(_ message: String, backupURL: URL? = nil) -> DefaultsError {
            DefaultsError(suite: suiteName, kind: .unreadable, fileURL: fileURL, backupURL: backupURL, message: message)
        }
        switch file.readMovingDamagedAside(holdingLock: holdingLock) {
        case .values(let values, let identity):
            return .values(values, identity)
        case .absent(nil):
            return .absent
        case .absent(let (backupPath, reason)?):
            problems.append(
                problem(
                    "\(file.path) is not a valid suite (\(reason)); it was moved to \(backupPath) and the suite goes on with its defaults",
                    backupURL: URL(fileURLWithPath: backupPath, isDirectory: false)))
            return .absent
        case .blocked(let identity, let blockage):
            let outcome =
                switch blockage {
                case .notRegularFile:
                    "it is left in place, the suite goes on with its defaults in memory, and writes fail until it is removed"
                case .unreadable, .unmovable:
                    "it is left in place and not overwritten, and the suite goes on with its defaults in memory"
                case .keepsChanging: "it is left in place and the suite goes on with its defaults"
                }
            let message = "\(file.describe(blockage)); \(outcome)"
            problems.append(problem(message))
            return .blocked(identity: identity, message: message)
        }
    }

    /// ``readMovingDamagedAside(_:suiteName:fileURL:holdingLock:problems:)`` for this suite.
    func readFile(holdingLock: Bool, problems: inout [DefaultsError]) -> ReadOutcome {
        Self.readMovingDamagedAside(
            file, suiteName: name, fileURL: fileURL, holdingLock: holdingLock, problems: &problems)
    }
}
