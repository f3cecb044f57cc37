import DefaultsPropertyList
import DefaultsStorage
import Foundation
import Logging

extension SyncEngine {
    /// Pushes every pending change (``SyncRules/standing(_:refused:isManaged:)``), sorted by key (so
    /// that machines pushing overlapping keys lock them in one order); on success, clears the ones
    /// not changed again meanwhile. Records the store refused are set aside, recorded in the
    /// journal and reported, and every other key goes on syncing.
    func push(to store: any DefaultsSyncStore, session generation: Int) async {
        let records = withState { state -> [SyncRecord] in
            guard state.session.isConnected else { return [] }
            var byName: [String: SyncRecord] = [:]
            for synced in state.suites.values {
                // Read only for a change not encoded when it was recorded (found on a reload).
                var persistent: [String: PropertyListValue]?
                for name in synced.names {
                    guard
                        let entry = synced.journal.entry(forKey: name),
                        Self.standing(of: name, entry, in: synced, state) == .pending
                    else {
                        continue
                    }
                    // `nil` data is a removal; a value that grew too large since is left out.
                    let data: Data?
                    if let encoded = synced.encoded[name], encoded.digest == entry.digest {
                        data = encoded.data
                    } else {
                        // The value the entry records, never another (the suite's file may not hold
                        // it yet): one that differs is recorded at its next look.
                        persistent = persistent ?? synced.suite.persistentStoredValues()
                        let held = synced.held(name, in: persistent)
                        let local = SyncRules.local(
                            digest: { SyncValue.digest(of: held, likeRecorded: $0) }, entry: entry, isFirstLook: false,
                            isOwnWrite: true)
                        guard local == .known, let encoded = try? SyncValue.encode(held, key: name) else { continue }
                        data = encoded
                    }
                    if let existing = byName[name], existing.timestamp >= entry.timestamp { continue }
                    byName[name] = SyncRecord(key: name, value: data, timestamp: entry.timestamp)
                }
            }
            return byName.values.sorted { $0.key < $1.key }
        }
        guard !records.isEmpty else { return }
        var refused: [String: String] = [:]
        do {
            try await store.push(records)
        } catch let refusal as SyncRecordsRefused {
            // The store's text, kept in the session and written to journals: bounded, whatever it sent.
            refused = refusal.reasons.mapValues { reason in
                reason.unicodeScalars.count <= 500
                    ? reason : String(String.UnicodeScalarView(reason.unicodeScalars.prefix(500))) + "…"
            }
        } catch {
            noteFailure("could not be pushed, kept and tried again shortly", error, store: store, session: generation)
            retry(.push, session: generation)
            return
        }
        clearFailure(session: generation)
        var newlyRefused: [String] = []
        withSession(generation) { state in
            for record in records {
                if let reason = refused[record.key] {
                    if state.session.refused[record.key]?.timestamp != record.timestamp {
                        newlyRefused.append(record.key)
                    }
                    state.session.refused[record.key] = SyncSession.Refusal(timestamp: record.timestamp, reason: reason)
                    // For readers of the journal alone; unless the key changed meanwhile.
                    for synced in state.suites.values where synced.names.contains(record.key) {
                        guard var entry = synced.journal.entry(forKey: record.key),
                            entry.isPending, entry.timestamp == record.timestamp, entry.refusal != reason
                        else { continue }
                        entry.refusal = reason
                        synced.journal.setEntry(entry, forKey: record.key)
                    }
                    continue
                }
                state.session.refused[record.key] = nil
                for (id, synced) in state.suites where synced.names.contains(record.key) {
                    guard
                        let entry = SyncRules.afterPush(
                            synced.journal.entry(forKey: record.key), pushed: record.timestamp)
                    else { continue }
                    synced.journal.setEntry(entry, forKey: record.key)
                    state.suites[id]?.encoded[record.key] = nil
                }
            }
            if state.session.refused.isEmpty {
                state.session.problems.clear(.refusal)
            }
            state.lastSync = state.clock.date
        }
        debug("pushed \(records.count - refused.count) change(s)")
        if !newlyRefused.isEmpty {
            let problem =
                "\(SyncRecordsRefused(refused.filter { newlyRefused.contains($0.key) })); "
                + "they stay local until their value changes, and every other key goes on syncing"
            withState { $0.session.problems.raise(.refusal, problem) }
            StorageEnvironment.logger.warning("\(problem)", metadata: ["store": "\(store.description)"])
        }
        saveLastSync()
    }
}
