import DefaultsStorage
import Foundation

extension SyncEngine {
    /// The synced keys.
    package var keys: Set<SyncedKey> { withState { $0.keys } }

    /// Syncs `key`: once a store is in use, its changes are pushed and the store's are applied.
    package func add(_ key: SyncedKey) {
        let (isNew, hasStore) = withState { state in
            (state.keys.insert(key).inserted, state.session.store != nil)
        }
        guard isNew else { return }
        guard hasStore else {
            keyAddedWithoutStore()
            return
        }
        watch(key)
        // Caught up with the keys added before it, in one batch, once connected; with the records
        // of its former names, which another version of the program may still push.
        let formerNames = key.migration?.formerNames ?? []
        let isConnected = withState { state in
            state.session.addedSinceCatchUp.insert(key.name)
            state.session.addedSinceCatchUp.formUnion(formerNames)
            return state.session.isConnected
        }
        if isConnected {
            enqueue(.catchUpAdded)
        }
        enqueue(.push)
    }

    /// Stops syncing `keys`; their local values stay.
    package func remove(_ keys: [SyncedKey]) {
        let unbound = withState { state -> [SyncedSuite] in
            var unbound: [SyncedSuite] = []
            for key in keys where state.keys.remove(key) != nil {
                let id = ObjectIdentifier(key.suite)
                let stillSynced = state.keys.contains { $0.name == key.name && $0.suite === key.suite }
                if !stillSynced {
                    state.suites[id]?.remove(key.name)
                }
                if let synced = state.suites[id], synced.names.isEmpty {
                    state.suites[id] = nil
                    unbound.append(synced)
                }
            }
            return unbound
        }
        for synced in unbound {
            unbind(synced)
        }
    }

    /// Removes the engine's observer and persist listener from a suite no longer bound, and makes
    /// its journal durable.
    private func unbind(_ synced: SyncedSuite) {
        if let listener = synced.persistListener {
            synced.suite.backend.storeBacked?.store.removePersistListener(listener)
        }
        synced.suite.changes.removeObserver(synced.token)
        synced.journal.flushLoggingFailure()
    }

    /// Stops syncing every key, and unbinds every suite (those bound for their pending changes too).
    package func removeAll() {
        remove(Array(keys))
        let unbound = withState { state in
            defer { state.suites = [:] }
            return Array(state.suites.values)
        }
        for synced in unbound {
            unbind(synced)
        }
    }

    /// Starts using `store`: every synced key's suite is watched, and the store's events run, each
    /// `report` waiting for room (``report(_:generation:)``).
    package func use(_ store: any DefaultsSyncStore, clock: HybridLogicalClock) {
        let (previous, reporters, keys, generation) = withState { state in
            let previous = state.session.runTask
            let reporters = state.session.reporters.map(\.continuation)
            state.session = SyncSession(store: store, generation: state.session.generation + 1)
            state.clock = clock
            return (previous, reporters, state.keys, state.session.generation)
        }
        // The previous store's reports waiting for room: their events would be passed over.
        for reporter in reporters {
            reporter.resume(returning: false)
        }
        previous?.cancel()
        for key in keys {
            watch(key)
        }
        bindSuitesWithPendingChanges()
        let task = Task.detached { [self] in
            await store.run { event in
                await self.report(event, generation: generation)
            }
        }
        withState { $0.session.runTask = task }
        enqueue(.push)
    }

    /// Binds `key`'s suite (once per suite) and records a change made while it was not watched.
    private func watch(_ key: SyncedKey) {
        let suite = key.suite
        let id = ObjectIdentifier(suite)
        let migration = key.migration
        let isBound = withState { state -> Bool in
            state.suites[id]?.names.insert(key.name)
            state.suites[id]?.addFormerNames(of: migration)
            return state.suites[id] != nil
        }
        if !isBound {
            bind(suite, for: key.name, migration: migration)
        }
        guard let journal = withState({ $0.suites[id]?.journal }) else { return }
        _ = journal.reloadIfChanged()
        let recording = withState { state in
            var recording = LocalRecording()
            if let entry = journal.entry(forKey: key.name) {
                state.clock.receive(entry.timestamp)
            }
            recordLocalValue(of: key.name, in: id, &state, isFirstLook: true, into: &recording)
            return recording
        }
        finish(recording)
    }

    /// Binds the suites of this program whose journals hold changes not pushed yet (made offline,
    /// or before a crash) and none of whose keys is declared yet: those changes are pushed at the
    /// first connection, whether or not the program touches their keys in this run. This
    /// program's suites are its standard suite and the suites it has opened in
    /// ``programDirectory``; the default directory is shared with other programs, whose suites
    /// are never opened here.
    private func bindSuitesWithPendingChanges() {
        guard let directory = programDirectory() else { return }
        let standardFile = FileSuite.fileURL(forName: StorageEnvironment.standardSuiteName, in: directory)
        // Set-aside changes too: a new session tries a refused one again, and a managed one waits.
        let unpushed = SyncJournal.summaries(in: directory).filter {
            $0.pendingChanges + $0.refusedChanges + $0.managedChanges > 0
        }
        for summary in unpushed {
            let fileURL = directory.appendingPathComponent(summary.suite + ".plist", isDirectory: false)
            let isBound = withState { state in
                state.suites.values.contains { $0.suite.backend.storeBacked?.store.fileURL == fileURL }
            }
            guard !isBound else { continue }
            let open = SuiteRegistry.all.first { $0.backend.storeBacked?.store.fileURL == fileURL }
            guard let suite = open ?? (fileURL == standardFile ? FileSuite.standard : nil) else { continue }
            bind(suite, for: nil, migration: nil)
        }
    }

    /// Binds `suite`: its journal, the engine's observer and its persist listener; it syncs
    /// `name` and the keys its journal holds pending changes of.
    private func bind(_ suite: any DefaultsSuite, for name: String?, migration: (any SyncedKeyMigration)?) {
        let id = ObjectIdentifier(suite)
        // Outside the lock: the first observer of a suite makes it read its file, which posts
        // what changed meanwhile to this very observer.
        let journal = SyncJournal(for: suite)
        // Changes the journal holds unpushed (made before a crash, or offline) are of synced keys,
        // declared or not yet in this run: they are pushed now, not when (or if) their keys are
        // declared again.
        let names = Set(journal.unpushedKeys).union(name.map { [$0] } ?? [])
        // Weak: a test's engine may be freed while a change being posted still holds this.
        let token = suite.changes.addObserver { [weak self] change in
            self?.suiteChanged(suite, change)
        }
        let isFirst = withState { state -> Bool in
            if state.suites[id] != nil {
                state.suites[id]?.names.formUnion(names)
                state.suites[id]?.addFormerNames(of: migration)
                return false
            }
            state.suites[id] = SyncedSuite(suite: suite, journal: journal, token: token, names: names)
            state.suites[id]?.addFormerNames(of: migration)
            return true
        }
        guard isFirst else {
            suite.changes.removeObserver(token)  // another thread bound it meanwhile
            return
        }
        guard let store = suite.backend.storeBacked?.store else { return }
        let listener = store.addPersistListener { [weak self] keys in self?.suiteWillWrite(suite, keys: keys) }
        let isStillBound = withState { state in
            state.suites[id]?.persistListener = listener
            return state.suites[id] != nil
        }
        if !isStillBound {
            store.removePersistListener(listener)  // its keys stopped syncing meanwhile
        }
    }
}
