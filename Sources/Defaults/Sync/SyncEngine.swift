import DefaultsPropertyList
import Foundation
import Synchronization

/// The engine behind ``Defaults/iCloud``: it watches the synced keys' suites, records each local
/// change in the suite's ``SyncJournal`` with a hybrid-logical-clock timestamp, pushes pending
/// changes to the store, and applies newer remote records to the suites.
///
/// Reads and writes of keys never wait on it: a local change is recorded synchronously (a
/// digest and a journal entry) and pushed from the engine's own task. Remote values are written
/// with the origin ``SuiteChange/Origin/sync``, which the engine's own observer passes over, and
/// without the engine's lock held, so observers of synced keys run as freely as any others.
final class SyncEngine: Sendable {

    static let shared = SyncEngine()

    private enum Job {
        case event(SyncEvent, generation: Int)
        case push
        case reconcile
        /// Everything the store holds newer than the journals: after the first connection, and
        /// after any the store cannot say what changed since the last.
        case catchUp
        /// The store's records of the keys added since the last catch-up, in one batch.
        case catchUpAdded
    }

    /// A record the store refused, set aside until its key's value changes.
    private struct Refusal {
        var timestamp: SyncTimestamp
        var reason: String
    }

    /// A synced key of one suite.
    private struct SuiteKey: Hashable {
        var suite: ObjectIdentifier
        var name: String
    }

    /// The suite of one or more synced keys, with its journal and the engine's observer.
    private struct Watch {
        let suite: any DefaultsSuite
        let journal: SyncJournal
        let token: SuiteChangeCenter.Token
        var names: Set<String>
        /// The former names of the synced keys (`migrating:`), each with the migration of the key
        /// that lists it: another version of the program syncs the key under that name, and its
        /// records are read into the key, converted.
        var formerNames: [String: KeyMigration] = [:]

        /// The synced key a record named `name` is for, with the migration converting its value
        /// when `name` is a former name of the key; `nil` when no key of this suite reads it.
        func target(ofRecordNamed name: String) -> (name: String, migration: KeyMigration?)? {
            if names.contains(name) { return (name, nil) }
            guard let migration = formerNames[name], names.contains(migration.name) else { return nil }
            return (migration.name, migration)
        }

        /// Adds the former names of a synced key; the first key to list a name keeps it. A former
        /// name is no longer synced as a key of its own (the journal may list it as pending, from
        /// the version before): the migration removes it here, and pushing that removal would
        /// take the value from the machines still on that version.
        mutating func addFormerNames(of migration: KeyMigration?) {
            for name in migration?.formerNames ?? [] where formerNames[name] == nil {
                formerNames[name] = migration
                names.remove(name)
            }
        }
    }

    private struct State {
        var keys: Set<Defaults.Keys> = []
        var watches: [ObjectIdentifier: Watch] = [:]
        var store: (any DefaultsSyncStore)?
        var clock = HybridLogicalClock()
        var generation = 0
        var runTask: Task<Void, Never>?
        var isConnected = false
        var hasCaughtUp = false
        /// A whole catch-up with this store completed: from then on a reconnection takes only
        /// what changed meanwhile (``DefaultsSyncStore/changesSinceLastConnection()``).
        var hasCaughtUpInFull = false
        var lastError: String?
        var lastSync: Date?
        var queuedJobs = 0
        /// A push is queued and not started: later changes ride along with it.
        var isPushQueued = false
        /// Keys added since the last whole catch-up, for the next ``Job/catchUpAdded``; one is
        /// queued while `isCatchUpAddedQueued`. Keys are often declared one by one after connecting
        /// (lazy `static let`s): each must not cost a catch-up of its own.
        var addedSinceCatchUp: Set<String> = []
        var isCatchUpAddedQueued = false
        /// Records the store refused, by key name.
        var refused: [String: Refusal] = [:]
        /// Remote values a local key cannot read (another version's type), by key name, with the
        /// record's time: not applied, and not answered with the local value.
        var keptAside: [String: SyncTimestamp] = [:]
        /// What was said of the records refused last, while any stays refused: a reconnection
        /// clears a connection's error, not this.
        var refusalProblem: String?
        /// The last failure of a call to the store logged (``noteFailure(_:_:store:)``), so that a
        /// failure repeated at every retry is logged once.
        var lastFailure: String?
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// Keys of each suite whose remote value is in the journal and not yet in the suite
        /// (``apply(_:)`` between its two steps): a suite's write meanwhile must not take the
        /// value it still holds for a local change.
        var applying: [ObjectIdentifier: Set<String>] = [:]
        /// Each pending change's value as encoded when it was recorded, with its digest: pushed
        /// as it is, so that a value is encoded once on its way out.
        var encoded: [SuiteKey: (digest: String, data: Data?)] = [:]
    }

    /// Held by every reader and writer of the state and the journals, and across a
    /// read-compare-record of journals and suites, so that a local change, a remote one and a push
    /// never interleave. Never held while a suite is written or its observers run; taken inside a
    /// suite's persisting write (``SuiteStore/beforePersisting``), so never held while taking a
    /// suite's `io`.
    /// Recursive, as a guard: a journal reached twice on one thread must not stop it.
    private let lock = NSRecursiveLock()
    /// The engine's state, only touched holding `lock` (the Mutex makes the engine checked
    /// `Sendable`). `withState`'s closures stay short and call nothing that could take the state
    /// again: a nested access would trap.
    private let state = Mutex(State())
    private let jobs: AsyncStream<Job>.Continuation
    let isDebug = Atomic(false)

    private init() {
        let (stream, continuation) = AsyncStream<Job>.makeStream()
        jobs = continuation
        Task.detached { [unowned self] in
            for await job in stream {
                await self.run(job)
                self.withState { $0.queuedJobs -= 1 }
                self.resumeWaitersIfIdle()
            }
        }
        // Keys declared with `iCloud: true` before the engine started, then each one as it is.
        let declared = SyncedKeyDeclarations.take { [unowned self] key in self.add(key) }
        withState { $0.keys.formUnion(declared) }
    }

    private func withState<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        lock.withLock { state.withLock { body(&$0) } }
    }

    private func enqueue(_ job: Job) {
        let isRedundant = withState { state -> Bool in
            if case .push = job {
                if state.isPushQueued { return true }
                state.isPushQueued = true
            }
            if case .catchUpAdded = job {
                if state.isCatchUpAddedQueued { return true }
                state.isCatchUpAddedQueued = true
            }
            state.queuedJobs += 1
            return false
        }
        if !isRedundant {
            jobs.yield(job)
        }
    }

    // MARK: Keys

    var keys: Set<Defaults.Keys> { withState { $0.keys } }

    func add(_ key: Defaults.Keys) {
        let (isNew, hasStore) = withState { state in
            (state.keys.insert(key).inserted, state.store != nil)
        }
        guard isNew else { return }
        guard hasStore else {
            SyncedKeyDeclarations.noteNothingSyncs()
            return
        }
        watch(key)
        // Caught up with the keys added before it, in one batch, once connected; with the records
        // of its former names, which another version of the program may still push.
        let formerNames = Defaults.KeyRegistry.migration(of: key)?.formerNames ?? []
        let isConnected = withState { state in
            state.addedSinceCatchUp.insert(key.name)
            state.addedSinceCatchUp.formUnion(formerNames)
            return state.isConnected
        }
        if isConnected {
            enqueue(.catchUpAdded)
        }
        enqueue(.push)
    }

    func remove(_ keys: [Defaults.Keys]) {
        let tokens = withState { state -> [(SuiteChangeCenter, SuiteChangeCenter.Token)] in
            var tokens: [(SuiteChangeCenter, SuiteChangeCenter.Token)] = []
            for key in keys where state.keys.remove(key) != nil {
                let id = ObjectIdentifier(key.suite)
                guard var watch = state.watches[id] else { continue }
                let stillSynced = state.keys.contains { $0.name == key.name && $0.suite === key.suite }
                if !stillSynced {
                    watch.names.remove(key.name)
                    watch.formerNames = watch.formerNames.filter { $0.value.name != key.name }
                }
                if watch.names.isEmpty {
                    state.watches[id] = nil
                    (watch.suite as? any StoreBackedSuite)?.store.beforePersisting.withLock { $0 = nil }
                    tokens.append((watch.suite.changes, watch.token))
                } else {
                    state.watches[id] = watch
                }
            }
            return tokens
        }
        for (center, token) in tokens {
            center.removeObserver(token)
        }
    }

    func removeAll() {
        remove(Array(keys))
    }

    /// Starts watching `key`'s suite (once per suite) and records a change made while unwatched.
    private func watch(_ key: Defaults.Keys) {
        let suite = key.suite
        let id = ObjectIdentifier(suite)
        let migration = Defaults.KeyRegistry.migration(of: key)
        let isWatched = withState { state -> Bool in
            state.watches[id]?.names.insert(key.name)
            state.watches[id]?.addFormerNames(of: migration)
            return state.watches[id] != nil
        }
        if !isWatched {
            // Outside every lock: the first observer of a suite makes it read its file, which
            // posts what changed meanwhile to this very observer.
            let journal = SyncJournal(for: suite)
            // Changes the journal holds unpushed (made before a crash, or offline) are of synced
            // keys, declared or not yet in this run: they are pushed now, not when (or if) their
            // keys are declared again.
            let names = Set(journal.pendingKeys).union([key.name])
            let token = suite.changes.addObserver { [unowned self] change in
                self.suiteChanged(suite, change)
            }
            let isFirst = withState { state -> Bool in
                if state.watches[id] != nil {
                    state.watches[id]?.names.insert(key.name)
                    state.watches[id]?.addFormerNames(of: migration)
                    return false
                }
                state.watches[id] = Watch(suite: suite, journal: journal, token: token, names: names)
                state.watches[id]?.addFormerNames(of: migration)
                return true
            }
            if isFirst {
                (suite as? any StoreBackedSuite)?.store.beforePersisting.withLock { hook in
                    hook = { [unowned self] keys in self.suiteWillWrite(suite, keys: keys) }
                }
            } else {
                suite.changes.removeObserver(token)  // another thread watched it meanwhile
            }
        }
        guard let journal = withState({ $0.watches[id]?.journal }) else { return }
        lock.withLock {
            let clock = withState { $0.clock }
            if let entry = journal.entry(forKey: key.name) {
                clock.receive(entry.timestamp)
            }
            _ = recordLocalState(of: key.name, in: suite, journal: journal, clock: clock, isFirstLook: true)
        }
    }

    // MARK: Local changes

    private func suiteChanged(_ suite: any DefaultsSuite, _ change: SuiteChange) {
        // Applied by this engine, already in the journal.
        guard change.origin != .sync else { return }
        if recordLocalChanges(of: suite, among: change.keys, isOwnWrite: change.origin == .thisProcess) {
            enqueue(.push)
        }
    }

    /// Before a new version of a synced suite's file is written: records the changes it carries
    /// that no observer has recorded yet, and makes the journal durable first.
    private func suiteWillWrite(_ suite: any DefaultsSuite, keys: Set<String>?) {
        if recordLocalChanges(of: suite, among: keys, isOwnWrite: true, skippingApplied: true) {
            enqueue(.push)
        }
        try? withState { $0.watches[ObjectIdentifier(suite)]?.journal }?.flush()
    }

    /// Records the synced keys among `keys` (all when `nil`) whose value the journal does not
    /// know as pending changes; returns whether there were any. `skippingApplied` leaves out the
    /// keys whose remote value is being applied: only an observer, told of an actual write, may
    /// take their value for a local change. `isOwnWrite`: the values were written by this
    /// process (see ``recordLocalState(of:in:journal:clock:isFirstLook:isOwnWrite:)``).
    private func recordLocalChanges(
        of suite: any DefaultsSuite, among keys: Set<String>?, isOwnWrite: Bool, skippingApplied: Bool = false
    ) -> Bool {
        lock.withLock { () -> Bool in
            let id = ObjectIdentifier(suite)
            let (watch, clock, applying) = withState { ($0.watches[id], $0.clock, $0.applying[id] ?? []) }
            guard let watch else { return false }
            var names = keys.map { $0.intersection(watch.names) } ?? watch.names
            if skippingApplied {
                names.subtract(applying)
            }
            var recorded = false
            for name in names {
                recorded =
                    recordLocalState(
                        of: name, in: suite, journal: watch.journal, clock: clock, isFirstLook: false,
                        isOwnWrite: isOwnWrite)
                    || recorded
            }
            return recorded
        }
    }

    /// Records the current value of `name` as a pending change if it differs from what the journal
    /// knows; returns whether it did. Called with the lock held, outside `withState`.
    ///
    /// A value found on first look with no journal entry was stored before the key was ever
    /// synced: it gets the oldest timestamp, so that a value on the store wins over it.
    ///
    /// A process syncing the same suite makes its journal durable before the suite's file, so
    /// for a short while the file may still hold the value an entry replaced: unless this process
    /// wrote the value itself (`isOwnWrite`), a value the journal had just before is not a change.
    private func recordLocalState(
        of name: String,
        in suite: any DefaultsSuite,
        journal: SyncJournal,
        clock: HybridLogicalClock,
        isFirstLook: Bool,
        isOwnWrite: Bool = false
    ) -> Bool {
        let data: Data?
        do {
            data = try SyncValue.encode(suite.persistentStoredValues()[name], key: name)
        } catch {
            report(problem: "\(error)")
            return false
        }
        let digest = SyncValue.digest(data)
        var entry = journal.entry(forKey: name)
        if entry?.digest != digest, journal.reloadIfChanged() {
            // Another process syncing the suite wrote this value: its journal says so.
            entry = journal.entry(forKey: name)
        }
        if let entry, entry.digest == digest {
            return false  // unchanged, or a remote value this engine (or another process's) applied
        }
        if !isOwnWrite, let entry, entry.previousDigest == digest {
            return false  // the file not yet written by the process that made the entry
        }
        // Nothing stored and never synced: no entry, so that any remote value is newer.
        if entry == nil, data == nil {
            return false
        }
        withState { $0.encoded[SuiteKey(suite: ObjectIdentifier(suite), name: name)] = (digest, data) }
        if entry == nil, isFirstLook {
            let unknown = SyncTimestamp.unknown(origin: clock.origin)
            journal.setEntry(
                .init(timestamp: unknown, digest: digest, isPending: true, previousDigest: SyncValue.absentDigest),
                forKey: name)
            return true
        }
        let timestamp = clock.now()
        journal.setEntry(
            .init(
                timestamp: timestamp, digest: digest, isPending: true,
                previousDigest: entry?.digest ?? SyncValue.absentDigest),
            forKey: name)
        debug("local change of \"\(name)\" at \(timestamp)")
        return true
    }

    // MARK: Store

    func use(_ store: any DefaultsSyncStore, clock: HybridLogicalClock) {
        let (previous, keys, generation) = withState { state in
            let previous = state.runTask
            state.generation += 1
            state.store = store
            state.clock = clock
            state.isConnected = false
            state.hasCaughtUp = false
            state.hasCaughtUpInFull = false
            state.lastError = nil
            return (previous, state.keys, state.generation)
        }
        previous?.cancel()
        for key in keys {
            watch(key)
        }
        let task = Task.detached { [unowned self] in
            await store.run { event in
                self.enqueue(.event(event, generation: generation))
            }
        }
        withState { $0.runTask = task }
        enqueue(.push)
    }

    private func run(_ job: Job) async {
        guard let store = withState({ $0.store }) else { return }
        switch job {
        case .event(let event, let generation):
            guard withState({ $0.generation == generation }) else { return }
            switch event {
            case .connected:
                let isReconnection = withState { state in
                    state.isConnected = true
                    state.lastError = state.refusalProblem
                    return state.hasCaughtUpInFull
                }
                debug("connected to \(store.description)")
                if isReconnection {
                    await resume(from: store)
                } else {
                    await catchUp(from: store)
                }
            case .received(let records):
                apply(records)
            case .disconnected(let error):
                let message = "\(error)"
                let isNew = withState { state in
                    defer {
                        state.isConnected = false
                        state.hasCaughtUp = false
                        state.lastError = message
                    }
                    return state.lastError != message
                }
                if isNew {
                    // A warning: the store reconnects by itself (a failover is routine); the status
                    // keeps the reason for as long as it lasts.
                    Defaults.logger.warning(
                        "iCloud keys are not syncing: \(message); retrying",
                        metadata: ["store": "\(store.description)"])
                }
            }
        case .push:
            withState { $0.isPushQueued = false }
            await push(to: store)
        case .reconcile:
            reconcile()
            await push(to: store)
        case .catchUp:
            if withState({ $0.isConnected }) {
                await catchUp(from: store)
            }
        case .catchUpAdded:
            let names = withState { state -> Set<String> in
                state.isCatchUpAddedQueued = false
                guard state.isConnected else { return [] }  // the next connection catches up
                defer { state.addedSinceCatchUp = [] }
                return state.addedSinceCatchUp
            }
            if !names.isEmpty {
                await catchUp(names, from: store)
            }
        }
    }

    /// How many keys one query of the store asks for.
    private static let batchSize = 1_000

    /// Takes the store's newer records for every synced key, then pushes what is newer here.
    private func catchUp(from store: any DefaultsSyncStore) async {
        // It covers the keys added so far.
        let added = withState { state in
            defer { state.addedSinceCatchUp = [] }
            return state.addedSinceCatchUp
        }
        do {
            let remote = try await store.timestamps()
            let wanted = withState { state -> [String] in
                remote.compactMap { name, timestamp in
                    let isNewer = state.watches.values.contains { watch in
                        guard let target = watch.target(ofRecordNamed: name) else { return false }
                        return watch.journal.entry(forKey: target.name).map { $0.timestamp < timestamp } ?? true
                    }
                    return isNewer ? name : nil
                }
            }
            try await fetchAndApply(wanted, from: store)
            markNewerThanStore(remote, names: nil)
            await push(to: store)
            withState { state in
                state.hasCaughtUp = state.isConnected
                state.hasCaughtUpInFull = true
                state.lastSync = Date()
            }
            saveLastSync()
            clearFailure()
            debug("caught up in full with \(remote.count) records")
        } catch {
            noteFailure("could not catch up with the store, tried again shortly", error, store: store)
            withState { $0.addedSinceCatchUp.formUnion(added) }
            retry(.catchUp)
        }
    }

    /// After a reconnection: takes what the store says changed meanwhile, the records of keys
    /// added meanwhile, and pushes what changed here; a whole catch-up when the store cannot say.
    private func resume(from store: any DefaultsSyncStore) async {
        do {
            guard let missed = try await store.changesSinceLastConnection() else {
                debug("the store cannot say what changed while disconnected: catching up in full")
                await catchUp(from: store)
                return
            }
            debug("resumed with \(missed.count) records changed while disconnected")
            apply(missed)
            await push(to: store)
            let hasAdded = withState { state in
                state.hasCaughtUp = state.isConnected
                state.lastSync = Date()
                return !state.addedSinceCatchUp.isEmpty
            }
            saveLastSync()
            if hasAdded {
                enqueue(.catchUpAdded)
            }
        } catch {
            noteFailure("could not catch up with the store, tried again shortly", error, store: store)
            retry(.catchUp)
        }
    }

    /// Takes the store's records of `names` (keys added since the last catch-up) where newer,
    /// in batches, then pushes what is newer here: one query for many keys, never a scan of the
    /// whole namespace for each.
    private func catchUp(_ names: Set<String>, from store: any DefaultsSyncStore) async {
        do {
            let records = try await fetchAndApply(Array(names), from: store)
            var remote: [String: SyncTimestamp] = [:]
            for record in records {
                remote[record.key] = record.timestamp
            }
            markNewerThanStore(remote, names: names)
            await push(to: store)
        } catch {
            noteFailure("could not catch up with the store, tried again shortly", error, store: store)
            withState { $0.addedSinceCatchUp.formUnion(names) }
            retry(.catchUpAdded)
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

    /// Queues `job` again after a pause: a push or catch-up failed while the store still looked
    /// connected (a lost connection is not always reported at once), and nothing else would retry
    /// it before the next connection. Retries stop once the store reports it is disconnected; its
    /// next connection catches up and pushes by itself.
    private func retry(_ job: Job, after delay: Duration = .seconds(1)) {
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            if withState({ $0.isConnected }) {
                enqueue(job)
            }
        }
    }

    /// Marks for pushing the local values the store has an older version of, or none (a new or
    /// reset store).
    private func markNewerThanStore(_ remote: [String: SyncTimestamp], names: Set<String>?) {
        withState { state in
            for watch in state.watches.values {
                for name in watch.names where names?.contains(name) ?? true {
                    guard var entry = watch.journal.entry(forKey: name), !entry.isPending,
                        entry.digest != SyncValue.absentDigest || remote[name] != nil
                    else { continue }
                    if remote[name].map({ $0 < entry.timestamp }) ?? true {
                        entry.isPending = true
                        watch.journal.setEntry(entry, forKey: name)
                    }
                }
            }
        }
    }

    /// Applies remote records to every synced key of their name whose local version is older:
    /// each suite's new values in one write, one change event. A record of a key's former name
    /// (pushed by a machine with an earlier version) is applied to the key, converted by its
    /// migration, on the same terms: when it is newer than what the journal holds for the key.
    ///
    /// Decided and entered in the journals under the lock; the journals are made durable, then
    /// the values are written with the origin ``SuiteChange/Origin/sync``, without the lock, so
    /// that observers may block on threads that write other synced keys. A key written locally
    /// meanwhile keeps that newer value (``SyncedWrite/expected``).
    private func apply(_ records: [SyncRecord]) {
        guard !records.isEmpty else { return }
        var batches: [ObjectIdentifier: (suite: any DefaultsSuite, journal: SyncJournal, writes: [SyncedWrite])] = [:]
        var unreadable: [(suite: any DefaultsSuite, problem: DefaultsError)] = []
        lock.withLock {
            let (watches, clock) = withState { state in (Array(state.watches.values), state.clock) }
            var persistent: [ObjectIdentifier: [String: PropertyListValue]] = [:]
            for record in records {
                let targets = watches.compactMap { watch in
                    watch.target(ofRecordNamed: record.key).map { (watch, $0) }
                }
                guard !targets.isEmpty else { continue }
                let decoded: PropertyListValue?
                do {
                    decoded = try SyncValue.decode(record.value, key: record.key)
                } catch {
                    report(problem: "\(error)")
                    continue
                }
                let recordDigest = SyncValue.digest(try? SyncValue.encode(decoded, key: record.key))
                for (watch, target) in targets {
                    let name = target.name
                    if let entry = watch.journal.entry(forKey: name), entry.timestamp >= record.timestamp {
                        continue
                    }
                    var value = decoded
                    var digest = recordDigest
                    if let migration = target.migration, let old = decoded {
                        guard let converted = migration.converted(old, from: record.key) else {
                            let reason = "\(migration.valueTypeName) of \"\(name)\" cannot convert \(old.kindName)"
                            if let problem = keepAside(record, in: watch.suite, because: reason) {
                                unreadable.append((watch.suite, problem))
                            }
                            continue
                        }
                        value = converted
                        digest = SyncValue.digest(try? SyncValue.encode(converted, key: name))
                    }
                    if let value, let problem = keepAsideIfUnreadable(value, named: name, of: record, in: watch.suite) {
                        unreadable.append((watch.suite, problem))
                        continue
                    }
                    clock.receive(record.timestamp)
                    let id = ObjectIdentifier(watch.suite)
                    // A local change not recorded yet (its observer has not run) is newer: it is
                    // recorded now, after the clock saw the record, and kept.
                    if recordLocalState(
                        of: name, in: watch.suite, journal: watch.journal, clock: clock, isFirstLook: false)
                    {
                        continue
                    }
                    if persistent[id] == nil {
                        persistent[id] = watch.suite.persistentStoredValues()
                    }
                    // What the file holds: for a key written twice in one batch, the value before
                    // the batch's first write of it, which is not made yet.
                    let held =
                        batches[id]?.writes.first(where: { $0.key == name }).map(\.expected) ?? persistent[id]?[name]
                    watch.journal.setEntry(
                        .init(
                            timestamp: record.timestamp, digest: digest, isPending: false,
                            previousDigest: SyncValue.digest(try? SyncValue.encode(held, key: name))),
                        forKey: name)
                    let into = name == record.key ? "" : " into \"\(name)\""
                    debug("remote change of \"\(record.key)\"\(into) at \(record.timestamp)")
                    withState { _ = $0.keptAside.removeValue(forKey: record.key) }
                    persistent[id]?[name] = value
                    // A key written twice in one batch (its record and its former name's) is
                    // written once, with the value decided last.
                    if let index = batches[id]?.writes.firstIndex(where: { $0.key == name }) {
                        batches[id]?.writes[index].value = value
                    } else {
                        batches[id, default: (watch.suite, watch.journal, [])].writes.append(
                            SyncedWrite(key: name, expected: held, value: value))
                    }
                }
            }
            withState { state in
                for (id, batch) in batches {
                    state.applying[id, default: []].formUnion(batch.writes.map(\.key))
                }
            }
        }
        for (suite, problem) in unreadable {
            suite.reportProblem(problem)
        }
        for batch in batches.values {
            try? batch.journal.flush()
        }
        for (id, batch) in batches {
            _ = batch.suite.applySyncedWrites(batch.writes)
            withState { $0.applying[id] = nil }
        }
    }

    /// Keeps a remote value aside when no key of its name in `suite` can read it (another version
    /// of the program stores another type there): applying it would make the key read its
    /// default, and answering it would push the local value over the other machine's. Returns
    /// the problem to report, the first time this record is kept aside. Called holding `lock`.
    private func keepAsideIfUnreadable(
        _ value: PropertyListValue, named name: String, of record: SyncRecord, in suite: any DefaultsSuite
    ) -> DefaultsError? {
        guard let declaration = Defaults.KeyRegistry.declarationRejecting(value, named: name, in: suite) else {
            return nil
        }
        return keepAside(record, in: suite, because: "\(declaration) cannot read \(value.kindName)")
    }

    /// Keeps `record` aside (listed in the status by its name), and returns the problem to report
    /// the first time. Called holding `lock`.
    private func keepAside(_ record: SyncRecord, in suite: any DefaultsSuite, because reason: String) -> DefaultsError?
    {
        let isNew = withState { state in
            defer { state.keptAside[record.key] = record.timestamp }
            return state.keptAside[record.key] != record.timestamp
        }
        guard isNew else { return nil }
        return DefaultsError(
            suite: suite.name, kind: .wrongType, key: record.key,
            message: "the value of \"\(record.key)\" synced from another machine was kept aside: "
                + "\(reason); the local value stays")
    }

    /// Pushes every pending change, sorted by key (so that machines pushing overlapping keys lock
    /// them in one order); on success, clears the ones not changed again meanwhile. Records the
    /// store refused are set aside and reported, and every other key goes on syncing.
    private func push(to store: any DefaultsSyncStore) async {
        let records = withState { state -> [SyncRecord] in
            guard state.isConnected else { return [] }
            var byName: [String: SyncRecord] = [:]
            for watch in state.watches.values {
                let persistent = watch.suite.persistentStoredValues()
                for name in watch.names {
                    guard let entry = watch.journal.entry(forKey: name), entry.isPending,
                        state.refused[name]?.timestamp != entry.timestamp
                    else { continue }
                    // `nil` data is a removal; a value that grew too large since is left out.
                    let data: Data?
                    if let encoded = state.encoded[SuiteKey(suite: ObjectIdentifier(watch.suite), name: name)],
                        encoded.digest == entry.digest
                    {
                        data = encoded.data
                    } else {
                        do {
                            data = try SyncValue.encode(persistent[name], key: name)
                        } catch {
                            continue
                        }
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
            refused = refusal.reasons
        } catch {
            noteFailure("could not be pushed, kept and tried again shortly", error, store: store)
            retry(.push)
            return
        }
        clearFailure()
        let newlyRefused = withState { state -> [String] in
            var newlyRefused: [String] = []
            for record in records {
                if let reason = refused[record.key] {
                    if state.refused[record.key]?.timestamp != record.timestamp {
                        newlyRefused.append(record.key)
                    }
                    state.refused[record.key] = Refusal(timestamp: record.timestamp, reason: reason)
                    continue
                }
                state.refused[record.key] = nil
                for watch in state.watches.values where watch.names.contains(record.key) {
                    guard var entry = watch.journal.entry(forKey: record.key), entry.isPending,
                        entry.timestamp <= record.timestamp
                    else { continue }
                    entry.isPending = false
                    watch.journal.setEntry(entry, forKey: record.key)
                    state.encoded[SuiteKey(suite: ObjectIdentifier(watch.suite), name: record.key)] = nil
                }
            }
            if state.refused.isEmpty {
                state.refusalProblem = nil
            }
            state.lastSync = Date()
            debug("pushed \(records.count - refused.count) change(s)")
            return newlyRefused
        }
        if !newlyRefused.isEmpty {
            let problem =
                "\(SyncRecordsRefused(refused.filter { newlyRefused.contains($0.key) })); "
                + "they stay local until their value changes, and every other key goes on syncing"
            withState { state in
                state.lastError = problem
                state.refusalProblem = problem
            }
            Defaults.logger.warning("\(problem)", metadata: ["store": "\(store.description)"])
        }
        saveLastSync()
    }

    /// Records changes the suites' change streams did not show (made inside
    /// ``Defaults/withoutPropagation(_:)``, for example).
    private func reconcile() {
        lock.withLock {
            let (watches, clock) = withState { (Array($0.watches.values), $0.clock) }
            for watch in watches {
                for name in watch.names {
                    _ = recordLocalState(
                        of: name, in: watch.suite, journal: watch.journal, clock: clock, isFirstLook: false)
                }
            }
        }
    }

    private func saveLastSync() {
        withState { state in
            for watch in state.watches.values {
                watch.journal.lastSync = state.lastSync
            }
        }
    }

    // MARK: Waiting and status

    /// The timestamps of the changes not on the store yet, less those it refused (set aside until
    /// they change).
    private func pendingTimestamps(_ state: State) -> [SyncTimestamp] {
        state.watches.values.flatMap { watch in
            watch.names.compactMap { name -> SyncTimestamp? in
                guard let entry = watch.journal.entry(forKey: name), entry.isPending,
                    state.refused[name]?.timestamp != entry.timestamp
                else { return nil }
                return entry.timestamp
            }
        }
    }

    private func pendingCount(_ state: State) -> Int {
        pendingTimestamps(state).count
    }

    private func isIdle(_ state: State) -> Bool {
        state.store == nil
            || (state.isConnected && state.hasCaughtUp && state.queuedJobs == 0 && pendingCount(state) == 0)
    }

    func waitForSyncCompletion() async {
        guard withState({ $0.store != nil }) else { return }
        enqueue(.reconcile)
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = withState { state -> Bool in
                    if isIdle(state) || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            withState { $0.waiters.removeValue(forKey: id) }?.resume()
        }
        let journals = withState { $0.watches.values.map(\.journal) }
        for journal in journals {
            try? journal.flush()
        }
    }

    private func resumeWaitersIfIdle() {
        let waiters = withState { state -> [CheckedContinuation<Void, Never>] in
            // Waiters first: `isIdle` reads every synced key's journal entry.
            guard !state.waiters.isEmpty, isIdle(state) else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    var status: SyncStatus {
        withState { state in
            let pending = pendingTimestamps(state)
            let now = state.clock.physicalTime
            let oldest = pending.lazy.map(\.wallTime).filter { $0 > 0 }.min()
            return SyncStatus(
                store: state.store?.description,
                isConnected: state.isConnected,
                pendingChanges: pending.count,
                lastSync: state.lastSync,
                lastError: state.lastError,
                refusedKeys: state.refused.keys.sorted(),
                keptAsideKeys: state.keptAside.keys.sorted(),
                lag: state.store == nil ? nil : .milliseconds(max(0, now - (oldest ?? now)))
            )
        }
    }

    // MARK: Reporting

    /// A call to the store failed while it looked connected (a lost connection is reported by the
    /// store itself): said in the status's `lastError`, and logged once while it stays the same.
    private func noteFailure(_ what: String, _ error: any Error, store: any DefaultsSyncStore) {
        let message = "\(error)"
        let isNew = withState { state in
            defer {
                state.lastFailure = message
                state.lastError = message
            }
            return state.lastFailure != message
        }
        if isNew {
            Defaults.logger.warning("iCloud keys \(what): \(message)", metadata: ["store": "\(store.description)"])
        }
    }

    /// A call to the store succeeded: a failure it reported is over.
    private func clearFailure() {
        withState { state in
            if let failure = state.lastFailure, state.lastError == failure {
                state.lastError = state.refusalProblem
            }
            state.lastFailure = nil
        }
    }

    private func report(problem: String) {
        withState { $0.lastError = problem }
        Defaults.logger.error("\(problem)")
    }

    private func debug(_ message: @autoclosure () -> String) {
        if isDebug.load(ordering: .relaxed) {
            Defaults.logger.info("[Defaults.iCloud] \(message())")
        }
    }
}
