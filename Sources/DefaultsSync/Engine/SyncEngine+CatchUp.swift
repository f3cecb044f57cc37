import DefaultsStorage
import Foundation

extension SyncEngine {
    /// How many keys one query of the store asks for.
    private static let batchSize = 1_000

    /// Takes the store's newer records for every synced key, then pushes what is newer here.
    func catchUp(from store: any DefaultsSyncStore, session generation: Int) async {
        // It covers the keys added so far.
        let added = withState { state in
            defer { state.session.addedSinceCatchUp = [] }
            return state.session.addedSinceCatchUp
        }
        do {
            let remote = try await store.timestamps()
            reloadJournals(of: nil)
            let wanted = withState { state -> [String] in
                remote.compactMap { name, timestamp in
                    let isNewer = state.suites.values.contains { synced in
                        guard let target = synced.target(ofRecordNamed: name) else { return false }
                        return SyncRules.isNewer(timestamp, than: synced.journal.entry(forKey: target.name))
                    }
                    return isNewer ? name : nil
                }
            }
            try await fetchAndApply(wanted, from: store)
            // The store answered; before the push, whose own failure would stand.
            clearFailure(session: generation)
            markNewerThanStore(remote, names: nil)
            await push(to: store, session: generation)
            withSession(generation) { state in
                state.session.hasCaughtUp = state.session.isConnected
                state.session.hasCaughtUpInFull = true
                state.lastSync = state.clock.date
            }
            saveLastSync()
            debug("caught up in full with \(remote.count) records")
        } catch {
            noteFailure(
                "could not catch up with the store, tried again shortly", error, store: store, session: generation)
            withState { $0.session.addedSinceCatchUp.formUnion(added) }
            retry(.catchUp, session: generation)
        }
    }

    /// After a reconnection: takes what the store says changed meanwhile, the records of keys
    /// added meanwhile, and pushes what changed here; a whole catch-up when the store cannot say.
    func resume(from store: any DefaultsSyncStore, session generation: Int) async {
        do {
            guard let missed = try await store.changesSinceLastConnection() else {
                debug("the store cannot say what changed while disconnected: catching up in full")
                await catchUp(from: store, session: generation)
                return
            }
            debug("resumed with \(missed.count) records changed while disconnected")
            clearFailure(session: generation)
            apply(missed)
            await push(to: store, session: generation)
            let hasAdded = withState { state in
                state.session.hasCaughtUp = state.session.isConnected
                state.lastSync = state.clock.date
                return !state.session.addedSinceCatchUp.isEmpty
            }
            saveLastSync()
            if hasAdded {
                enqueue(.catchUpAdded)
            }
        } catch {
            noteFailure(
                "could not catch up with the store, tried again shortly", error, store: store, session: generation)
            retry(.catchUp, session: generation)
        }
    }

    /// Takes the store's records of `names` (keys added since the last catch-up) where newer, in
    /// batches, then pushes what is newer here: one query for many keys, never a scan of the
    /// whole namespace for each.
    func catchUp(_ names: Set<String>, from store: any DefaultsSyncStore, session generation: Int) async {
        do {
            let records = try await fetchAndApply(Array(names), from: store)
            clearFailure(session: generation)
            var remote: [String: SyncTimestamp] = [:]
            for record in records {
                remote[record.key] = record.timestamp
            }
            markNewerThanStore(remote, names: names)
            await push(to: store, session: generation)
        } catch {
            noteFailure(
                "could not catch up with the store, tried again shortly", error, store: store, session: generation)
            withState { $0.session.addedSinceCatchUp.formUnion(names) }
            retry(.catchUpAdded, session: generation)
        }
    }

    /// Fetches the store's records of `names`, in batches, and applies the newer ones.
    @discardableResult
    private func fetchAndApply(_ names: [String], from store: any DefaultsSyncStore) async throws -> [SyncRecord] {
        var fetched: [SyncRecord] = []
        let sorted = names.sorted()
        for start in stride(from: 0, to: sorted.count, by: Self.batchSize) {
            let records = try await store.records(
                forKeys: Array(sorted[start..<min(start + Self.batchSize, sorted.count)]))
            apply(records)
            fetched += records
        }
        return fetched
    }

    /// Marks for pushing the local values the store has an older version of, or none (a new or
    /// reset store): `remote` holds the store's versions of `names` (every synced key when `nil`).
    private func markNewerThanStore(_ remote: [String: SyncTimestamp], names: Set<String>?) {
        withState { state in
            for synced in state.suites.values {
                for name in synced.names where names?.contains(name) ?? true {
                    if let entry = SyncRules.againstStore(synced.journal.entry(forKey: name), remote: remote[name]) {
                        synced.journal.setEntry(entry, forKey: name)
                    }
                }
            }
        }
    }

    func saveLastSync() {
        withState { state in
            for synced in state.suites.values {
                synced.journal.lastSync = state.lastSync
            }
        }
    }
}
