import DefaultsFiles
import DefaultsPropertyList
import Foundation

extension FileSuite {
    /// The longest wait between retries of a background write that keeps failing.
    static let longestRetryDelay: Duration = .seconds(60)

    /// How a background write that failed is tried again: after a second, then twice as long
    /// each time.
    static let writeRetry = WriteScheduler<FileSuite>.Retry(first: .seconds(1), longest: longestRetryDelay)

    /// The write the scheduler runs (``writes``): writes this process's pending changes and
    /// returns once they are durable; does nothing if there are none. On failure the changes stay
    /// pending; the problem is reported once the scheduler's lock is released.
    func writePending() -> WriteScheduler<FileSuite>.Written {
        // Taking `io` first waits for a write in progress on another thread (a `modify` holds it),
        // so that a flush with nothing left pending still returns only once that write is durable.
        let hasPending = io.withLock { _ in store.hasPending }
        guard hasPending else { return WriteScheduler.Written() }
        let (failure, deliver) = store.holdingLocksUntilLater { held in writeFile(into: &held) }
        return WriteScheduler.Written(
            failure: failure, isPending: failure != nil && store.hasPending, afterwards: deliver)
    }

    /// The one write path: holding `io` and the file lock, brings the values in memory up to
    /// date with the file (applying this process's pending changes on top of what other processes
    /// wrote), runs `edit` (for ``modify(forKey:_:)``), then writes the pending changes. Problems
    /// are reported and changes posted once both locks are released, so that a handler or an
    /// observer may flush or reload. Returns the error of a write that failed.
    ///
    /// `edit` runs without the state lock, so it may read and write the suite, but not flush it.
    ///
    /// Called again on the same thread from inside `edit` (an observer of a key the body of
    /// ``modify(forKey:_:)`` sets, modifying another key), `edit` runs at once: both locks are
    /// already held, and the outer call writes its changes.
    @discardableResult
    func synchronize(editing edit: (inout HeldEdits) -> Void = { _ in }) -> DefaultsError? {
        store.holdingLocks { held in
            if isSynchronizingOnThisThread {
                edit(&held)
                return nil
            }
            let failure = writeFile(editing: edit, into: &held)
            if failure != nil, store.hasPending {
                writes.retryLater(self)
            }
            return failure
        }
    }

    /// The locked part of ``synchronize(editing:)``: merges, edits and writes holding `io` and the
    /// file lock, keeping what changed and the problems met (its failure last) in `held`.
    private func writeFile(
        editing edit: (inout HeldEdits) -> Void = { _ in }, into held: inout HeldEdits
    ) -> DefaultsError? {
        let failure = io.withLock { io -> DefaultsError? in
            // Writing begins watching: the write itself merges with what was changed meanwhile.
            if !hasBegunWatching.exchange(true, ordering: .acquiringAndReleasing) {
                startWatchingAdministratorLayers()
                // What the administrator changed before: read once no lock is held.
                DispatchQueue.global(qos: .utility).async { [weak self] in self?.reloadAdministratorLayers() }
            }
            startWatching()
            do {
                try file.withLock {
                    try mergeWithFile(into: &held)
                    whileSynchronizingOnThisThread { edit(&held) }
                    try writeValues(io: &io, into: &held)
                }
                return nil
            } catch let error as DefaultsError {
                return error
            } catch {
                return DefaultsError(
                    suite: name, kind: Self.kind(of: error), fileURL: fileURL,
                    message:
                        "could not write \(file.path): \(error); the values stay in memory and are written at the next flush",
                    underlyingError: error
                )
            }
        }
        if let failure {
            held.report(failure)
        }
        return failure
    }

    /// A lock that failed or was refused (a link in the lock file's place) is a lock problem; a
    /// lock file that cannot be created is an unwritable directory, a write problem.
    private static func kind(of error: any Error) -> DefaultsError.Kind {
        guard let failure = error as? SuiteFileLock.Failure, !failure.isUncreatable else { return .writeFailed }
        return .lockFailed
    }

    /// Reads the file if another process changed it since this one read or wrote it, and makes
    /// it the base of the values in memory, keeping what that changed in `held`. Runs holding the
    /// file lock.
    private func mergeWithFile(into held: inout HeldEdits) throws {
        // Unchanged since we read or wrote it (the common case): no need to read it again.
        if isFileAsLoaded() { return }
        let loadedIdentity = fileState.withLock { $0.loadedIdentity }
        let values: [String: PropertyListValue]
        let identity: FileIdentity?
        var problems: [DefaultsError] = []
        defer {
            for problem in problems {
                held.report(problem)
            }
        }
        switch readFile(holdingLock: true, problems: &problems) {
        case .values(let read, let readIdentity):
            (values, identity) = (read, readIdentity)
        case .absent:
            (values, identity) = ([:], nil)
        case .blocked(_, let message):
            // Already in `problems`; the write it stops is a failure of its own.
            problems.removeLast()
            throw DefaultsError(suite: name, kind: .writeFailed, fileURL: fileURL, message: message)
        }
        adopt(values, identity: identity, loadedIdentity: loadedIdentity, into: &held)
    }

    /// Whether the file at the path is the version the suite last read or wrote, or the one it is
    /// renaming into place (whose watchers' event may come before the write returns).
    func isFileAsLoaded() -> Bool {
        guard let identity = try? PosixFile.identity(at: file.path) else { return false }
        return fileState.withLock { state in
            identity == state.loadedIdentity || state.renamingIdentity?.isSameVersion(as: identity) == true
        }
    }

    /// Makes `values`, read from the file as the version `identity`, the base of the values in
    /// memory, with this process's pending changes on top (a ``SuiteEdit/load(_:)`` edit, whose
    /// origin is another process), kept in `held`. Nothing changes when that version is the one
    /// already loaded.
    func adopt(
        _ values: [String: PropertyListValue], identity: FileIdentity?, loadedIdentity: FileIdentity?,
        into held: inout HeldEdits
    ) {
        if identity != nil, identity == loadedIdentity {
            return
        }
        // Under `io`, which every change of the loaded identity holds: no write can come between.
        fileState.withLock { $0.loadedIdentity = identity }
        editHoldingLocks(.load(values), into: &held)
    }

    /// Writes the values in memory if any change is pending. Runs holding `io` and the file lock.
    private func writeValues(io: inout IOState, into held: inout HeldEdits) throws {
        guard let (pending, values) = store.takePending() else { return }
        let loadedIdentity = fileState.withLock { $0.loadedIdentity }
        // The encoder's last document is the file as loaded, so only the pending keys changed.
        let isEncoderCurrent = io.xmlEncoderIdentity != nil && io.xmlEncoderIdentity == loadedIdentity
        let changedKeys = isEncoderCurrent && !pending.removesAll ? Set(pending.changes.keys) : nil
        io.xmlEncoderIdentity = nil
        store.willPersist(pending)
        do {
            var refused: [String: RefusedValue] = [:]
            let identity = try writeReadable(
                values, changedKeys: changedKeys, pending: pending, refusing: &refused, io: &io)
            if !refused.isEmpty {
                refuse(refused, into: &held)
            }
            io.xmlEncoderIdentity = identity
            io.hasRemovedStaleTemporaryFiles = true
            fileState.withLock { state in
                state.loadedIdentity = identity
                state.renamingIdentity = nil
                state.writeCount += 1
            }
        } catch {
            store.restorePending(pending)
            fileState.withLock { $0.renamingIdentity = nil }
            throw DefaultsError(
                suite: name, kind: .writeFailed, fileURL: fileURL,
                message:
                    "could not write \(file.path): \(error); the values stay in memory and are written at the next flush",
                underlyingError: error
            )
        }
    }
}

extension FileSuite {
    /// A value this process changed that was not written: the file would have been larger than
    /// any reader takes.
    struct RefusedValue {
        var value: PropertyListValue
        /// What the file holds for the key, which it keeps.
        var stored: PropertyListValue?
        var encodedSize: Int
    }

    /// Writes `values`, or, when the file would be larger than any reader takes, what remains
    /// once the largest values this process changed are refused (returned in `refused`): each
    /// of those keys keeps the value the file holds.
    private func writeReadable(
        _ values: [String: PropertyListValue], changedKeys: Set<String>?, pending: PendingChanges,
        refusing refused: inout [String: RefusedValue], io: inout IOState
    ) throws -> FileIdentity {
        var values = values
        var changedKeys = changedKeys
        var candidates: [(key: String, value: PropertyListValue, size: Int)]?
        var stored: [String: PropertyListValue] = [:]
        while true {
            do {
                return try file.write(
                    values, changedKeys: changedKeys, encoder: &io.xmlEncoder,
                    removingStaleTemporaryFiles: !io.hasRemovedStaleTemporaryFiles,
                    beforeRename: { identity in fileState.withLock { $0.renamingIdentity = identity } })
            } catch let tooLarge as SuiteFile.TooLargeToReadBack {
                if candidates == nil {
                    candidates = pending.changes.compactMap { key, edit in
                        guard case .set(let value) = edit else { return nil }
                        return (key, value, SuiteFile.encodedSize(key, value))
                    }.sorted { $0.size < $1.size }
                    if case .values(let read, _) = file.read() {
                        stored = read
                    }
                }
                guard candidates?.isEmpty == false else { throw tooLarge }
                // The largest first, until the rest should fit; encoded again to be sure.
                var excess = tooLarge.size - BoundedFileRead.sizeLimit
                while excess > 0, let largest = candidates?.popLast() {
                    refused[largest.key] = RefusedValue(
                        value: largest.value, stored: stored[largest.key], encodedSize: largest.size)
                    values[largest.key] = stored[largest.key]
                    excess -= largest.size
                }
                changedKeys = nil
            }
        }
    }

    /// Puts back in memory the value the file holds for each refused key (unless it changed
    /// again meanwhile), and reports each.
    private func refuse(_ refused: [String: RefusedValue], into held: inout HeldEdits) {
        // Never a managed key: this process wrote it.
        let putBack = refused.map { key, refusal in
            ConditionalWrite(key: key, expected: refusal.value, value: refusal.stored)
        }
        // Not pending: the file holds these values.
        editHoldingLocks(.putBack(putBack), into: &held, isPersistedByCaller: true)
        let megabytes = SuiteFile.TooLargeToReadBack.megabytes
        for (key, refusal) in refused.sorted(by: { $0.key < $1.key }) {
            held.report(
                DefaultsError(
                    suite: name, kind: .tooLarge, key: key, fileURL: fileURL,
                    message: "the value for key \"\(key)\" (\(megabytes(refusal.encodedSize)) encoded) would make "
                        + "\(file.path) larger than the \(megabytes(BoundedFileRead.sizeLimit)) a suite's file may "
                        + "hold; it was not stored, and the key keeps its stored value"))
        }
    }
}

extension FileSuite {
    /// The key, in the thread's dictionary, that marks this suite's `edit` of ``synchronize(editing:)``
    /// running on the thread, with the suite's locks held.
    private var synchronizingKey: String {
        "swift-defaults.synchronizing.\(UInt(bitPattern: ObjectIdentifier(self)))"
    }

    /// Whether this thread is inside the `edit` of ``synchronize(editing:)``, holding the suite's
    /// `io` lock: a flush, reload or modify reached from there (an observer called by a `set`,
    /// a problem handler) must not take it again, which would stop the process.
    var isSynchronizingOnThisThread: Bool {
        Thread.current.threadDictionary[synchronizingKey] != nil
    }

    private func whileSynchronizingOnThisThread<Result>(_ body: () -> Result) -> Result {
        let dictionary = Thread.current.threadDictionary
        let key = synchronizingKey
        dictionary[key] = true
        defer { dictionary.removeObject(forKey: key) }
        return body()
    }
}
