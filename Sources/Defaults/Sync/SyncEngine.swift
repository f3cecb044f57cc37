import Foundation
import Synchronization

/// The engine behind ``Defaults/iCloud``: it watches the synced keys' suites, records each local
/// change in the suite's ``SyncJournal`` with a hybrid-logical-clock timestamp, pushes pending
/// changes to the store, and applies newer remote records to the suites.
///
/// Reads and writes of keys never wait on it: a local change is recorded synchronously (a
/// digest and a journal entry) and pushed from the engine's own task.
final class SyncEngine: Sendable {

    static let shared = SyncEngine()

    private enum Job {
        case event(SyncEvent, generation: Int)
        case push
        case reconcile
        case catchUp([String]?)
    }

    /// The suite of one or more synced keys, with its journal and the engine's observer.
    private struct Watch {
        let suite: any DefaultsSuite
        let journal: SyncJournal
        let token: SuiteChangeCenter.Token
        var names: Set<String>
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
        var lastError: String?
        var lastSync: Date?
        var queuedJobs = 0
        /// A push is queued and not started: later changes ride along with it.
        var isPushQueued = false
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        var hasWarnedNoStore = false
    }

    /// Held by every reader and writer of the state and the journals, and across a
    /// read-compare-record of journals and suites, so that a local change, a remote one and a push
    /// never interleave. Recursive: applying a remote value posts a change whose observers (the
    /// engine's own among them) run on the same thread, and may write keys.
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
        let (isNew, hasStore, isConnected) = withState { state in
            (state.keys.insert(key).inserted, state.store != nil, state.isConnected)
        }
        guard isNew else { return }
        guard hasStore else {
            noteLocalOnly()
            return
        }
        watch(key)
        if isConnected {
            enqueue(.catchUp([key.name]))
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
                }
                if watch.names.isEmpty {
                    state.watches[id] = nil
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
        let journal = withState { state -> SyncJournal in
            if var watch = state.watches[id] {
                watch.names.insert(key.name)
                state.watches[id] = watch
                return watch.journal
            }
            let journal = SyncJournal(for: suite)
            let token = suite.changes.addObserver { [unowned self] change in
                self.suiteChanged(suite, keys: change.keys)
            }
            state.watches[id] = Watch(suite: suite, journal: journal, token: token, names: [key.name])
            return journal
        }
        lock.withLock {
            let clock = withState { $0.clock }
            if let entry = journal.entry(forKey: key.name) {
                clock.receive(entry.timestamp)
            }
            _ = recordLocalState(of: key.name, in: suite, journal: journal, clock: clock, isFirstLook: true)
        }
    }

    // MARK: Local changes

    private func suiteChanged(_ suite: any DefaultsSuite, keys: Set<String>) {
        let recorded = lock.withLock { () -> Bool in
            let (watch, clock) = withState { ($0.watches[ObjectIdentifier(suite)], $0.clock) }
            guard let watch else { return false }
            var recorded = false
            for name in keys.intersection(watch.names) {
                recorded =
                    recordLocalState(of: name, in: suite, journal: watch.journal, clock: clock, isFirstLook: false)
                    || recorded
            }
            return recorded
        }
        if recorded {
            enqueue(.push)
        }
    }

    /// Records the current value of `name` as a pending change if it differs from what the journal
    /// knows; returns whether it did. Called with the lock held, outside `withState`.
    ///
    /// A value found on first look with no journal entry was stored before the key was ever
    /// synced: it gets the oldest timestamp, so that a value on the store wins over it.
    private func recordLocalState(
        of name: String,
        in suite: any DefaultsSuite,
        journal: SyncJournal,
        clock: HybridLogicalClock,
        isFirstLook: Bool
    ) -> Bool {
        let data: Data?
        do {
            data = try SyncValue.encode(suite.persistentStoredValues()[name]?.object, key: name)
        } catch {
            report(problem: "\(error)")
            return false
        }
        let digest = SyncValue.digest(data)
        let entry = journal.entry(forKey: name)
        if let entry, entry.digest == digest {
            return false  // unchanged, or the echo of a remote value just applied
        }
        if entry == nil, isFirstLook {
            // Nothing stored and never synced: no entry, so that any remote value is newer.
            guard data != nil else { return false }
            let unknown = SyncTimestamp.unknown(origin: clock.origin)
            journal.setEntry(.init(timestamp: unknown, digest: digest, isPending: true), forKey: name)
            return true
        }
        let timestamp = clock.now()
        journal.setEntry(.init(timestamp: timestamp, digest: digest, isPending: true), forKey: name)
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
                withState { state in
                    state.isConnected = true
                    state.lastError = nil
                }
                debug("connected to \(store.description)")
                await catchUp(nil, from: store)
            case .received(let records):
                for record in records {
                    apply(record)
                }
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
                    Defaults.logger.error(
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
        case .catchUp(let names):
            if withState({ $0.isConnected }) {
                await catchUp(names, from: store)
            }
        }
    }

    /// Takes the store's newer records for the synced keys (or only `names`), then pushes.
    private func catchUp(_ names: [String]?, from store: any DefaultsSyncStore) async {
        do {
            let remote = try await store.timestamps()
            let wanted = withState { state -> [String] in
                remote.compactMap { name, timestamp in
                    guard names?.contains(name) ?? true else { return nil }
                    let isNewer = state.watches.values.contains { watch in
                        watch.names.contains(name)
                            && (watch.journal.entry(forKey: name).map { $0.timestamp < timestamp } ?? true)
                    }
                    return isNewer ? name : nil
                }
            }
            if !wanted.isEmpty {
                for record in try await store.records(forKeys: wanted) {
                    apply(record)
                }
            }
            markNewerThanStore(remote, names: names)
            await push(to: store)
            withState { state in
                state.hasCaughtUp = state.isConnected
                state.lastSync = Date()
            }
            saveLastSync()
        } catch {
            debug("catch-up failed, tried again shortly: \(error)")
            retry(.catchUp(names))
        }
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
    private func markNewerThanStore(_ remote: [String: SyncTimestamp], names: [String]?) {
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

    /// Applies a remote record to every synced key of that name whose local version is older.
    private func apply(_ record: SyncRecord) {
        lock.withLock {
            let (targets, clock) = withState { state in
                (state.watches.values.filter { $0.names.contains(record.key) }, state.clock)
            }
            guard !targets.isEmpty else { return }
            let object: Any?
            do {
                object = try SyncValue.decode(record.value, key: record.key)
            } catch {
                report(problem: "\(error)")
                return
            }
            let digest = SyncValue.digest(try? SyncValue.encode(object, key: record.key))
            for watch in targets {
                if let entry = watch.journal.entry(forKey: record.key), entry.timestamp >= record.timestamp {
                    continue
                }
                clock.receive(record.timestamp)
                watch.journal.setEntry(
                    .init(timestamp: record.timestamp, digest: digest, isPending: false), forKey: record.key)
                debug("remote change of \"\(record.key)\" at \(record.timestamp)")
                // Observers run now, on this thread; the engine's own sees the digest it just recorded.
                watch.suite.set(object, forKey: record.key)
            }
        }
    }

    /// Pushes every pending change; on success, clears the ones not changed again meanwhile.
    private func push(to store: any DefaultsSyncStore) async {
        let records = withState { state -> [SyncRecord] in
            guard state.isConnected else { return [] }
            var byName: [String: SyncRecord] = [:]
            for watch in state.watches.values {
                let persistent = watch.suite.persistentStoredValues()
                for name in watch.names {
                    guard let entry = watch.journal.entry(forKey: name), entry.isPending else { continue }
                    // `nil` data is a removal; a value that grew too large since is left out.
                    let data: Data?
                    do {
                        data = try SyncValue.encode(persistent[name]?.object, key: name)
                    } catch {
                        continue
                    }
                    if let existing = byName[name], existing.timestamp >= entry.timestamp { continue }
                    byName[name] = SyncRecord(key: name, value: data, timestamp: entry.timestamp)
                }
            }
            return Array(byName.values)
        }
        guard !records.isEmpty else { return }
        do {
            try await store.push(records)
        } catch {
            debug("push failed, kept and tried again shortly: \(error)")
            retry(.push)
            return
        }
        withState { state in
            for record in records {
                for watch in state.watches.values where watch.names.contains(record.key) {
                    guard var entry = watch.journal.entry(forKey: record.key), entry.isPending,
                        entry.timestamp <= record.timestamp
                    else { continue }
                    entry.isPending = false
                    watch.journal.setEntry(entry, forKey: record.key)
                }
            }
            state.lastSync = Date()
            debug("pushed \(records.count) change(s)")
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

    private func pendingCount(_ state: State) -> Int {
        state.watches.values.reduce(0) { count, watch in
            count + watch.names.filter { watch.journal.entry(forKey: $0)?.isPending == true }.count
        }
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
            SyncStatus(
                store: state.store?.description,
                isConnected: state.isConnected,
                pendingChanges: pendingCount(state),
                lastSync: state.lastSync,
                lastError: state.lastError
            )
        }
    }

    // MARK: Reporting

    /// Notes, once per process, that iCloud keys are declared with no store to sync them through.
    private func noteLocalOnly() {
        let shouldLog = withState { state -> Bool in
            guard state.store == nil, !state.hasWarnedNoStore else { return false }
            state.hasWarnedNoStore = true
            return true
        }
        if shouldLog {
            Defaults.logger.notice(
                "Defaults.iCloud has no sync store connected yet: until one is (Defaults.iCloud.use(_:)), iCloud keys are stored locally only and nothing syncs"
            )
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
