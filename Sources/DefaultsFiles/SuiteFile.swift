import DefaultsPropertyList
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One suite's property-list file and its companions in the same directory: the lock file,
/// temporary files of writes in progress, and backups of damaged versions.
///
/// The one file layer under ``FileSuite`` and the `defaults` command. It has no side effects
/// beyond the files themselves: it reports nothing and keeps no state, and returns what it found
/// for the caller to report (after releasing its locks).
package struct SuiteFile: Sendable {
    /// The property list: `<name>.plist`.
    package let path: String
    /// The directory that holds it and its companions.
    package let directory: String
    /// The file's name.
    package let fileName: String
    /// The sidecar file writers lock (see `SuiteFileLock` for why not the property list).
    package let lockPath: String

    package init(url: URL) {
        path = url.standardizedFileURL.path
        directory = (path as NSString).deletingLastPathComponent
        fileName = (path as NSString).lastPathComponent
        lockPath = (directory as NSString).appendingPathComponent("." + fileName + ".lock")
    }

    // MARK: Reading

    /// What reading the file found.
    package enum Contents {
        /// The file's values (none for an empty file) and the identity of the version read.
        case values([String: PropertyListValue], FileIdentity)
        /// Nothing is there.
        case absent
        /// A directory, FIFO, device or socket is there: never read, never replaced.
        case notRegularFile(FileIdentity, kind: String)
        /// A regular file that is not a property-list dictionary, after rereading it in case a
        /// writer was caught halfway. `reason` says what is wrong.
        case damaged(FileIdentity, reason: String)
        /// The file exists but could not be read (permissions, an I/O error, far too large).
        case unreadable(reason: String)
    }

    /// How often a file that does not decode is read before it is judged damaged.
    package static let readAttempts = 4
    /// The pause between those reads: Foundation rewrites the file in place, so a reader can catch
    /// it half-written.
    package static let rereadPause: Duration = .milliseconds(20)
    /// How long an empty (0-byte) file is read again, at most, before it is taken as an empty
    /// suite. Foundation's `UserDefaults` on Linux, like any in-place writer, truncates the file
    /// and then writes it (a busy writer was seen to leave it empty for a second). Taking that
    /// moment's empty file as the suite would lose its values, and a write renamed over it would
    /// lose the other writer's. This library never writes an empty file.
    package static let emptyFileWait: Duration = .seconds(3)

    /// Whether an empty file may be another program's rewrite in progress: it was changed (a
    /// truncation sets its modification time) less than ``emptyFileWait`` ago, and this read has
    /// not waited that long already. An empty file left for longer (`touch`) is taken at once.
    static func mayBeRewrittenInPlace(_ identity: FileIdentity, waited: Duration) -> Bool {
        guard waited < emptyFileWait else { return false }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let age =
            Duration.seconds(Int64(now.tv_sec) - Int64(identity.modificationSeconds))
            + .nanoseconds(Int64(now.tv_nsec) - Int64(identity.modificationNanoseconds))
        return age < emptyFileWait
    }

    /// Reads and decodes the file, changing nothing.
    ///
    /// An empty file that changed within ``emptyFileWait`` is read again until it has content or
    /// that time has passed (``mayBeRewrittenInPlace(_:waited:)``), whoever reads it: a program
    /// opening the suite for the first time, a reload, or a write merging with the file (which
    /// holds the suite's lock, so it waits for the content before replacing the file).
    package func read() -> Contents {
        var lastFailure: (identity: FileIdentity, data: Data)?
        var attempts = 0
        var emptyWaited: Duration = .zero
        while true {
            let outcome: BoundedFileRead.Outcome
            do {
                // Through the user's own links only (dotfiles kept in a repository), never through
                // one planted by another user; the end is opened without following a link that
                // appeared since, and read only if it and its directories are the user's or root's.
                let end = try AtomicFileWrite.endOfLinks(path).path
                try FileOwnership.user.checkDirectories(above: end)
                outcome = try BoundedFileRead.read(end, followingLinks: false, ownership: .user)
            } catch {
                return .unreadable(reason: "\(error)")
            }
            switch outcome {
            case .absent:
                return .absent
            case .notRegularFile(let identity, let kind):
                return .notRegularFile(identity, kind: kind)
            case .tooLarge:
                return .unreadable(reason: BoundedFileRead.tooLargeReason())
            case .untrusted(_, let reason):
                return .unreadable(reason: reason)
            case .file(let identity, let data)
            where data.isEmpty && Self.mayBeRewrittenInPlace(identity, waited: emptyWaited):
                Self.sleep(for: Self.rereadPause)
                emptyWaited += Self.rereadPause
            case .file(let identity, let data):
                let reason: String
                switch Self.decode(data) {
                case .success(let values): return .values(values, identity)
                case .failure(let problem): reason = problem.description
                }
                attempts += 1
                let isUnchanged = lastFailure.map { $0.identity == identity && $0.data == data } ?? false
                guard !isUnchanged, attempts < Self.readAttempts else {
                    return .damaged(identity, reason: reason)
                }
                lastFailure = (identity, data)
                Self.sleep(for: Self.rereadPause)
            }
        }
    }

    /// Why a file's bytes are not a suite.
    package struct DecodingProblem: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// Decodes a suite file: a property list (XML, binary or old-style) whose top level is a
    /// dictionary. An empty file is an empty suite, as CoreFoundation reads it. Text that is not
    /// valid UTF-8 is refused, and a binary file whose shared references would expand far beyond
    /// its size, so that nothing is silently repaired or blown up.
    package static func decode(_ data: Data) -> Result<[String: PropertyListValue], DecodingProblem> {
        guard !data.isEmpty else { return .success([:]) }
        let value: PropertyListValue
        do {
            value = try PropertyList.decodeValue(data)
        } catch {
            return .failure(DecodingProblem(description: "it is not a property list: \(error)"))
        }
        guard case .dictionary(let dictionary) = value else {
            return .failure(DecodingProblem(description: "its top level is \(value.kindName), not a dictionary"))
        }
        return .success(dictionary)
    }

    // MARK: Changing

    /// Runs `body` holding the lock other writers of this file take, creating the directory first.
    ///
    /// - Throws: `FileRefusal` when a directory above the file is another user's,
    ///   `SuiteFileLock.Failure` or `SystemCallError` when the directory cannot be made or the
    ///   lock taken; what `body` throws otherwise.
    package func withLock<Result>(_ body: () throws -> Result) throws -> Result {
        try FileOwnership.user.checkDirectories(above: lockPath)
        try PosixFile.makeDirectory(directory)
        return try SuiteFileLock.withLock(path: lockPath, body)
    }

    /// What ``moveAside(_:)`` did.
    package enum MoveAside {
        case moved(backupPath: String)
        /// The file is no longer the version judged damaged; judge the new one.
        case changed
    }

    /// Renames the damaged version `identity` of the file (the file a link points to, for a link)
    /// to `<file>.corrupt-<UTC timestamp>` (with `-2`, `-3`… if taken), unless it has changed
    /// meanwhile. Call it holding the lock.
    package func moveAside(_ identity: FileIdentity) throws -> MoveAside {
        let target = try AtomicFileWrite.target(of: path)
        guard try PosixFile.identity(at: target) == identity else { return .changed }
        let base = target + ".corrupt-" + Self.timestamp()
        var candidate = base
        var number = 1
        while try PosixFile.linkStatus(candidate) != nil {
            number += 1
            candidate = base + "-\(number)"
        }
        guard rename(target, candidate) == 0 else { throw SystemCallError("rename", path: target) }
        try PosixFile.syncDirectory(of: target)
        return .moved(backupPath: candidate)
    }

    /// Replaces the file with `values` as an XML property list, atomically, through a link to a
    /// file the user owns. Call it holding the lock. Returns the new file's identity.
    package func write(_ values: [String: PropertyListValue], removingStaleTemporaryFiles: Bool) throws -> FileIdentity
    {
        var encoder = XMLDictionaryEncoder()
        return try write(values, encoder: &encoder, removingStaleTemporaryFiles: removingStaleTemporaryFiles)
    }

    /// Writes `values` with `encoder`, which keeps what it encoded last so that a writer of the
    /// same file encodes only the entries that changed. `beforeRename` is told the new file's
    /// identity before it replaces the old one (see `AtomicFileWrite.write`).
    package func write(
        _ values: [String: PropertyListValue], changedKeys: Set<String>? = nil, encoder: inout XMLDictionaryEncoder,
        removingStaleTemporaryFiles: Bool, beforeRename: (FileIdentity) -> Void = { _ in }
    ) throws -> FileIdentity {
        let data: Data
        // Never write what no reader would read back: a document past the limit is measured, not held.
        encoder.sizeLimit = BoundedFileRead.sizeLimit
        do {
            data = try encoder.encode(values, changedKeys: changedKeys)
        } catch let error where error.kind == .tooLarge {
            throw TooLargeToReadBack(
                size: error.size ?? BoundedFileRead.sizeLimit + 1, largest: Self.largestEntry(of: values))
        } catch {
            throw FileRefusal(description: "the values could not be encoded: \(error)")
        }
        let target = try AtomicFileWrite.target(of: path)
        if removingStaleTemporaryFiles {
            AtomicFileWrite.removeStaleTemporaryFiles(for: target)
        }
        return try AtomicFileWrite.write(data, to: target, beforeRename: beforeRename)
    }

    /// A write refused before anything was written: the file would be larger than
    /// ``BoundedFileRead/sizeLimit``, which every reader refuses.
    package struct TooLargeToReadBack: Error, CustomStringConvertible {
        /// The encoded size, in bytes.
        package let size: Int
        /// The key whose value takes the most room, and its encoded size.
        package var largest: (key: String, size: Int)?

        package var description: String {
            let limit =
                "it would be \(Self.megabytes(size)), over the \(Self.megabytes(BoundedFileRead.sizeLimit)) "
                + "a suite's file may hold"
            guard let largest else { return limit }
            return limit + "; its largest value is \"\(largest.key)\" (\(Self.megabytes(largest.size)) encoded)"
        }

        package static func megabytes(_ bytes: Int) -> String {
            bytes % (1 << 20) == 0 ? "\(bytes >> 20) MB" : String(format: "%.1f MB", Double(bytes) / Double(1 << 20))
        }
    }

    /// The bytes a file holding only `key` and `value` takes, measured without holding more than
    /// a megabyte of it.
    package static func encodedSize(_ key: String, _ value: PropertyListValue) -> Int {
        var encoder = XMLDictionaryEncoder()
        encoder.sizeLimit = 1 << 20
        do {
            return try encoder.encode([key: value]).count
        } catch {
            return error.size ?? 0
        }
    }

    /// The key whose value, encoded alone, takes the most room.
    private static func largestEntry(of values: [String: PropertyListValue]) -> (key: String, size: Int)? {
        var largest: (key: String, size: Int)?
        for (key, value) in values {
            let size = encodedSize(key, value)
            if size > largest?.size ?? -1 {
                largest = (key, size)
            }
        }
        return largest
    }

    /// Removes the domain: the file and its lock file, so that nothing is left in the directory.
    /// A link (a dotfile kept elsewhere) stays, and the file it points to is emptied instead.
    /// Takes the lock itself.
    package func remove() throws {
        try withLock {
            if let info = try PosixFile.linkStatus(path) {
                switch PosixFile.fileType(info) {
                case S_IFLNK:
                    _ = try write([:], removingStaleTemporaryFiles: true)
                    return
                case S_IFREG:
                    guard unlink(path) == 0 || errno == ENOENT else { throw SystemCallError("unlink", path: path) }
                default:
                    throw FileRefusal(description: "\(path) is not a regular file; it is left in place")
                }
            }
            AtomicFileWrite.removeStaleTemporaryFiles(for: path)
            // Removed holding it: a waiter finds it gone and locks a new one (see SuiteFileLock).
            unlink(lockPath)
            try PosixFile.syncDirectory(of: path)
        }
    }

    // MARK: Helpers

    /// The current UTC time as `20261122T011500Z`.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    package static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR {
            request = remaining
        }
    }
}
