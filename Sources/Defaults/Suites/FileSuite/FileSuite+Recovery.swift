import DefaultsFiles
import DefaultsPropertyList
import Foundation

/// Reading the suite's file when it may be damaged: a file that does not parse is moved aside to
/// a named backup, never overwritten; a directory, FIFO, device or unreadable file is left alone
/// and blocks writes; either way the suite goes on with its defaults and in-memory values.
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

    /// Reads the file now. A damaged file is moved aside (under the file lock, taken here unless
    /// the caller holds it). Problems are appended to `problems`, for the caller to report once it
    /// holds no lock.
    static func read(
        _ file: SuiteFile, suiteName: String, fileURL: URL, holdingLock: Bool, expectingContent: Bool = false,
        problems: inout [DefaultsError]
    ) -> ReadOutcome {
        func problem(_ message: String, backupURL: URL? = nil) -> DefaultsError {
            DefaultsError(suite: suiteName, kind: .unreadable, fileURL: fileURL, backupURL: backupURL, message: message)
        }
        // A writer may keep replacing the file with damaged versions; judge a few, then give up.
        for _ in 0..<5 {
            switch file.read(expectingContent: expectingContent) {
            case .values(let values, let identity):
                return .values(values, identity)
            case .absent:
                return .absent
            case .notRegularFile(let identity, let kind):
                let message =
                    "\(file.path) is \(kind), not a property-list file; it is left in place, the suite goes on with its defaults in memory, and writes fail until it is removed"
                problems.append(problem(message))
                return .blocked(identity: identity, message: message)
            case .unreadable(let reason):
                let message =
                    "\(file.path) could not be read (\(reason)); it is left in place and not overwritten, and the suite goes on with its defaults in memory"
                problems.append(problem(message))
                return .blocked(identity: nil, message: message)
            case .damaged(let identity, let reason):
                let moved: SuiteFile.MoveAside
                do {
                    moved = try holdingLock ? file.moveAside(identity) : file.withLock { try file.moveAside(identity) }
                } catch {
                    let message =
                        "\(file.path) is not a valid suite (\(reason)) and could not be moved aside (\(error)); it is left in place and not overwritten, and the suite goes on with its defaults"
                    problems.append(problem(message))
                    return .blocked(identity: identity, message: message)
                }
                guard case .moved(let backupPath) = moved else { continue }
                problems.append(
                    problem(
                        "\(file.path) is not a valid suite (\(reason)); it was moved to \(backupPath) and the suite goes on with its defaults",
                        backupURL: URL(fileURLWithPath: backupPath, isDirectory: false)))
                return .absent
            }
        }
        let message =
            "\(file.path) keeps changing into something that is not a valid suite; it is left in place and the suite goes on with its defaults"
        problems.append(problem(message))
        return .blocked(identity: nil, message: message)
    }

    /// ``read(_:suiteName:fileURL:holdingLock:problems:)`` for this suite.
    /// A file that held values when this suite last read or wrote it and is found empty is read
    /// again until it has content (another program rewriting it in place), or for a while.
    func readFile(holdingLock: Bool, problems: inout [DefaultsError]) -> ReadOutcome {
        let expectingContent = fileState.withLock { ($0.loadedIdentity?.size ?? 0) > 0 }
        return Self.read(
            file, suiteName: name, fileURL: fileURL, holdingLock: holdingLock, expectingContent: expectingContent,
            problems: &problems)
    }
}
