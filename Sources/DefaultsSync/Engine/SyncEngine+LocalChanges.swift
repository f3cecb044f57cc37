import DefaultsPropertyList
import DefaultsStorage
import Foundation
import Logging

extension SyncEngine {
    /// What recording local values did, to act on once the lock is released.
    struct LocalRecording {
        /// Some value was recorded as a pending change: a push is due.
        var hasChanges = false
        /// Values that could not be encoded (over the size limit, say): logged.
        var problems: [String] = []
        var notes: [String] = []
    }

    /// Records the value `name` holds in the suite bound as `id` as a pending change when the
    /// rules say it is one (``SyncRules/local(digest:entry:isFirstLook:isOwnWrite:)``); called
    /// holding the lock. `persistent`: the suite's stored values, when already read.
    func recordLocalValue(
        of name: String, in id: ObjectIdentifier, _ state: inout State, isFirstLook: Bool = false,
        isOwnWrite: Bool = false, persistent: [String: PropertyListValue]? = nil, into recording: inout LocalRecording
    ) {
        guard let synced = state.suites[id] else { return }
        let held = synced.held(name, in: persistent)
        let entry = synced.journal.entry(forKey: name)
        let local = SyncRules.local(
            digest: { SyncValue.digest(of: held, likeRecorded: $0) }, entry: entry, isFirstLook: isFirstLook,
            isOwnWrite: isOwnWrite)
        switch local {
        case .known, .notYetWritten, .neverStored:
            break
        case .changed(let isFoundBeforeSyncing):
            do {
                let stamp = try recordPending(
                    name, held: held, replacing: entry, isFoundBeforeSyncing: isFoundBeforeSyncing, in: id, &state)
                recording.hasChanges = true
                recording.notes.append("local change of \"\(name)\"" + (stamp.map { " at \($0)" } ?? ""))
            } catch {
                state.session.problems.raise(.value, "\(error)")
                recording.problems.append("\(error)")
            }
        }
    }

    /// Records `held` as the pending change of `name`, encoded as it is pushed, and returns its
    /// stamp; throws, recording nothing, when it cannot be (over the size limit, say).
    @discardableResult
    func recordPending(
        _ name: String, held: PropertyListValue?, replacing entry: SyncJournal.Entry?,
        isFoundBeforeSyncing: Bool = false, in id: ObjectIdentifier, _ state: inout State
    ) throws(SyncValue.Problem) -> SyncTimestamp? {
        guard let synced = state.suites[id] else { return nil }
        let data = try SyncValue.encode(held, key: name)
        let digest = SyncValue.digest(of: held)
        let pending = SyncRules.pendingEntry(
            digest: digest, replacing: entry, isFoundBeforeSyncing: isFoundBeforeSyncing, clock: state.clock)
        synced.journal.setEntry(pending, forKey: name)
        state.suites[id]?.encoded[name] = (data, digest)
        return pending.timestamp
    }

    /// Logs what recording found and queues a push when there is one; with no lock held.
    func finish(_ recording: LocalRecording) {
        for problem in recording.problems {
            StorageEnvironment.logger.error("\(problem)")
        }
        for note in recording.notes {
            debug(note)
        }
        if recording.hasChanges {
            enqueue(.push)
        }
    }

    /// The engine's observer of a synced suite.
    func suiteChanged(_ suite: any DefaultsSuite, _ change: SuiteChange) {
        // Applied by this engine, already in the journal.
        guard change.origin != .sync else { return }
        let isOwnWrite = change.origin == .thisProcess
        if !isOwnWrite {
            // Another process syncing the suite makes its journal durable before the suite's
            // file: what it wrote may be there.
            reloadJournals(of: [ObjectIdentifier(suite)])
        }
        finish(recordLocalChanges(of: suite, among: change.keys, isOwnWrite: isOwnWrite))
        if !isOwnWrite {
            // A key the administrator stopped managing may have a change waiting to be pushed.
            enqueue(.push)
        }
    }

    /// The engine's persist listener: before a new version of a synced suite's file is written,
    /// records the changes it carries that no observer has recorded yet, and makes the journal
    /// durable first. Runs holding the suite's `io` and file lock.
    func suiteWillWrite(_ suite: any DefaultsSuite, keys: Set<String>?) {
        finish(recordLocalChanges(of: suite, among: keys, isOwnWrite: true, skippingApplied: true))
        withState { $0.suites[ObjectIdentifier(suite)]?.journal }?.flushLoggingFailure()
    }

    /// Records the synced keys among `keys` (all when `nil`) whose value the journal does not
    /// know as pending changes. `skippingApplied` leaves out the keys whose remote value is being
    /// applied: only an observer, told of an actual write, may take their value for a local change.
    private func recordLocalChanges(
        of suite: any DefaultsSuite, among keys: Set<String>?, isOwnWrite: Bool, skippingApplied: Bool = false
    ) -> LocalRecording {
        withState { state in
            var recording = LocalRecording()
            let id = ObjectIdentifier(suite)
            guard let synced = state.suites[id] else { return recording }
            var names = keys.map { $0.intersection(synced.names) } ?? synced.names
            if skippingApplied {
                names.subtract(synced.applying)
            }
            let persistent = names.count > 1 ? suite.persistentStoredValues() : nil
            for name in names {
                recordLocalValue(
                    of: name, in: id, &state, isOwnWrite: isOwnWrite, persistent: persistent, into: &recording)
            }
            return recording
        }
    }

    /// Records changes the suites' change streams did not show (made inside
    /// ``Defaults/withoutPropagation(_:)``, for example).
    func reconcile() {
        reloadJournals(of: nil)
        let recording = withState { state in
            var recording = LocalRecording()
            for (id, synced) in state.suites {
                let persistent = synced.suite.persistentStoredValues()
                for name in synced.names {
                    recordLocalValue(of: name, in: id, &state, persistent: persistent, into: &recording)
                }
            }
            return recording
        }
        finish(recording)
    }

    /// Reads again the journals of the suites bound as `ids` (all when `nil`) that another
    /// process wrote since; outside the lock.
    func reloadJournals(of ids: [ObjectIdentifier]?) {
        let journals = withState { state in
            ids.map { $0.compactMap { state.suites[$0]?.journal } } ?? state.suites.values.map(\.journal)
        }
        for journal in journals {
            _ = journal.reloadIfChanged()
        }
    }
}
