import DefaultsPropertyList
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileSuite {
    /// The longest wait between retries of a background write that keeps failing.
    static let longestRetryDelay: Duration = .seconds(60)

    /// Writes pending changes after `delay`, on a background queue.
    ///
    /// The timer holds the suite weakly; a suite released before it fires writes from `deinit`.
    func scheduleWrite(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            self?.writeScheduled()
        }
    }

    private func writeScheduled() {
        // Cleared before writing, so that a change made during the write schedules the next one.
        state.withLock { $0.isWriteScheduled = false }
        do {
            try writePending()
            state.withLock { $0.retryDelay = nil }
        } catch {
            // Already reported. Try again later, backing off, unless a newer write is on its way.
            let delay: Duration? = state.withLock { state in
                let delay = min((state.retryDelay ?? .milliseconds(500)) * 2, Self.longestRetryDelay)
                state.retryDelay = delay
                return state.claimWriteSchedule() ? delay : nil
            }
            if let delay {
                scheduleWrite(after: delay)
            }
        }
    }

    /// Writes this process's pending changes and returns when they are durable; does nothing if
    /// there are none. On failure the changes stay pending, the problem is reported, and the error
    /// is thrown.
    func writePending() throws {
        let changedKeys: Set<String>
        do {
            changedKeys = try io.withLock { io -> Set<String> in
                let taken = state.withLock { state -> Snapshot? in
                    guard !state.pending.isEmpty else { return nil }
                    defer { state.pending = PendingChanges() }
                    return Snapshot(
                        pending: state.pending, values: state.domains.persistent, identity: state.loadedIdentity)
                }
                guard let snapshot = taken else { return [] }
                do {
                    return try write(snapshot, io: &io)
                } catch {
                    let failed = PropertyListValues(snapshot.pending)
                    state.withLock { $0.pending = failed.values.followed(by: $0.pending) }
                    throw error
                }
            }
        } catch {
            let problem =
                error as? SuiteError
                ?? SuiteError(
                    suite: name, kind: .writeFailed, fileURL: fileURL,
                    message: "could not write \(location.path): \(error)")
            report(problem)
            throw problem
        }
        // Posted outside the locks: observers may read or write the suite.
        changes.post(SuiteChange(keys: changedKeys, origin: .otherProcess))
    }

    /// What a write starts from, taken atomically with clearing the pending changes.
    struct Snapshot {
        var pending: PendingChanges
        /// The values in memory: the loaded file with `pending` applied.
        var values: [String: Any]
        var identity: FileIdentity?
    }

    /// Replaces the file with `snapshot`'s values, merged with the file's current contents if
    /// another process changed it since it was loaded. Returns the keys that other processes
    /// changed, found while merging. Runs with `io` held.
    private func write(_ snapshot: Snapshot, io: inout IOState) throws -> Set<String> {
        do {
            try PosixFile.makeDirectory(location.directory)
        } catch {
            throw SuiteError(
                suite: name, kind: .writeFailed, fileURL: fileURL,
                message: "could not create the directory of \(location.path): \(error)")
        }
        startWatching()
        return try withFileLock {
            if !io.hasRemovedStaleTemporaryFiles {
                io.hasRemovedStaleTemporaryFiles = true
                removeStaleTemporaryFiles()
            }
            var contents = snapshot.values
            var isMerged = false
            // Unchanged since we read or wrote it (the common case): no need to read it again.
            let isUnchanged = (try? PosixFile.identity(at: location.path)).map { $0 == snapshot.identity } ?? false
            if !isUnchanged {
                let current = try readForMerge()
                if current.identity != snapshot.identity {
                    // Another process wrote since we read: apply only our own changes to what it wrote.
                    contents = snapshot.pending.applied(to: current.values)
                    isMerged = true
                }
            }
            let data: Data
            do {
                data = try io.xmlEncoder.encode(contents)
            } catch {
                throw SuiteError(
                    suite: name, kind: .writeFailed, fileURL: fileURL,
                    message: "could not encode the values of \(location.path): \(error)")
            }
            let identity: FileIdentity
            do {
                identity = try PosixFile.writeAtomically(
                    data, to: location.path, temporaryPath: location.temporaryPath(processID: getpid())
                )
            } catch {
                throw SuiteError(
                    suite: name, kind: .writeFailed, fileURL: fileURL,
                    message:
                        "could not write \(location.path): \(error); the values stay in memory and are written at the next flush"
                )
            }
            let written = PropertyListValues(contents)
            return state.withLock { state in
                state.loadedIdentity = identity
                state.writeCount += 1
                guard isMerged else { return [] }
                return state.domains.replacePersistent(with: state.pending.applied(to: written.values))
            }
        }
    }

    /// The file's current values and identity, for merging under the lock. A file that does not
    /// parse is moved aside; one that exists but cannot be read stops the write, so that it is
    /// never replaced unseen.
    private func readForMerge() throws -> (values: [String: Any], identity: FileIdentity?) {
        switch readCurrent(holdingLock: true) {
        case .values(let values, let identity):
            return (values, identity)
        case .absent:
            return ([:], nil)
        case .directory:
            throw SuiteError(
                suite: name, kind: .writeFailed, fileURL: fileURL,
                message: "\(location.path) is a directory, so the suite cannot be written; the values stay in memory"
            )
        case .unreadable(let error):
            throw SuiteError(
                suite: name, kind: .writeFailed, fileURL: fileURL,
                message:
                    "\(location.path) exists but could not be read (\(error)); it is not overwritten, and the values stay in memory"
            )
        }
    }

    /// Removes temporary files left by writers of this suite that died mid-write (killed before
    /// their rename). Called with the file lock held, so no live writer's file is taken.
    private func removeStaleTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: location.directory) else { return }
        for name in names where name.hasPrefix(location.temporaryPrefix) {
            guard let processID = Int32(name.dropFirst(location.temporaryPrefix.count)) else { continue }
            if processID != getpid(), kill(processID, 0) != 0, errno == ESRCH {
                unlink((location.directory as NSString).appendingPathComponent(name))
            }
        }
    }
}

// MARK: Decoding

extension FileSuite {
    /// Why a file's bytes are not a suite.
    struct DecodingProblem: Error, CustomStringConvertible {
        var description: String
    }

    /// Decodes a suite file: a property list (XML, binary or old-style) whose top level is a
    /// dictionary.
    static func decode(_ data: Data) -> Result<[String: Any], DecodingProblem> {
        guard !data.isEmpty else {
            return .failure(DecodingProblem(description: "the file is empty"))
        }
        let object: Any
        do {
            object = try PropertyList.decode(data)
        } catch {
            return .failure(DecodingProblem(description: "it is not a property list: \(error)"))
        }
        guard let dictionary = object as? [String: Any] else {
            return .failure(
                DecodingProblem(
                    description: "its top level is \(PropertyListObject.kindName(object)), not a dictionary"))
        }
        return .success(dictionary)
    }
}

extension PropertyListObject {
    /// The property-list name of an object's kind, for messages.
    static func kindName(_ object: Any) -> String {
        switch object {
        case is String: "a string"
        case is Bool: "a boolean"
        case is Int, is UInt64: "an integer"
        case is Double: "a real"
        case is Date: "a date"
        case is Data: "data"
        case is [Any]: "an array"
        case is [String: Any]: "a dictionary"
        default: "a \(type(of: object))"
        }
    }
}
