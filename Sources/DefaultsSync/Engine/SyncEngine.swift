import DefaultsStorage
import Foundation
import Logging
import Synchronization

/// The engine behind ``Defaults/iCloud``: a driver around ``SyncRules``. It binds each suite of
/// synced keys (``SyncedSuite``: its journal, its observer, its persist listener), keeps a
/// ``SyncSession`` with the store in use, and runs the store's events and its own jobs (pushes,
/// catch-ups) one at a time on a task of its own.
///
/// Reads and writes of keys never wait on it: a local change is recorded synchronously (a digest
/// and a journal entry) and pushed from the engine's task. Remote values are written with the
/// origin ``SuiteChange/Origin/sync``, which the engine's own observer passes over.
///
/// Its one lock, `state`, is held across each read-compare-record of journals and suites, so that
/// a local change, a remote one and a push never interleave; it is plain (not recursive). It is
/// never held while a file is read or written, the store is called, or an observer or a logger
/// runs: journals another process may have written are read again before it is taken, and made
/// durable after. It is taken inside a suite's persisting write (the persist listener), so it is
/// never held while taking a suite's `io`; under it, only suites' and journals' state locks are
/// taken (to read values and record entries), and the clock's (its wall clock is read too).
/// Continuations it holds (waiters for completion, reports waiting for room) are taken out under
/// it and resumed once it is released.
///
/// The store's events wait for room: its `report` returns once fewer than ``queuedEventLimit``
/// of them are queued and not yet run, and a store that awaits it stops reading meanwhile. The
/// bound is on events, the jobs that carry records; the engine's own jobs carry none, and pushes
/// and catch-ups of added keys are coalesced, but not `.reconcile` (one per wait for completion)
/// nor a retried `.catchUp`. A store whose calls are answered on the connection that brings its
/// events reads on while a call awaits its answer (the sync service's client does).
///
/// It knows keys by name only (``SyncedKey``). The application's engine is made by the typed API
/// (`SyncEngine.shared`, behind `Defaults.iCloud`), which hands it the keys declared with
/// `iCloud: true`. Tests make engines of their own, each with its keys, store and clock, and a
/// `schedule` they control, and run them in process (`EngineDriver` in the tests); ``shutDown()``
/// ends one.
package final class SyncEngine: Sendable {

    /// The most store events queued and not yet run, the one running included: four keep the
    /// engine fed while the store reads the next. It bounds the events the engine holds, each
    /// of one batch of records (at most 1,000 from the sync service), not the engine's other jobs
    /// nor what a store holds before reporting it.
    static let queuedEventLimit = 4

    enum Job {
        case event(SyncEvent, generation: Int)
        case push
        case reconcile
        /// Everything the store holds newer than the journals: after the first connection, and
        /// after any the store cannot say what changed since the last.
        case catchUp
        /// The store's records of the keys added since the last catch-up, in one batch.
        case catchUpAdded
    }

    struct State {
        var keys: Set<SyncedKey> = []
        var suites: [ObjectIdentifier: SyncedSuite] = [:]
        var session = SyncSession()
        var clock = HybridLogicalClock()
        var lastSync: Date?
        var queuedJobs = 0
        /// A push is queued and not started: later changes ride along with it.
        var isPushQueued = false
        var isCatchUpAddedQueued = false
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// Waiting for every queued job to have run (``waitUntilQuiet()``).
        var quietWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The engine's state, journals' entries included: see the type's discussion. Its closures
    /// call nothing that could take it again (a nested access traps).
    private let state = Mutex(State())
    private let jobs: AsyncStream<Job>.Continuation
    package let isDebug = Atomic(false)
    /// Where the program's suites are, whose journals' unpushed changes are pushed at each
    /// ``use(_:clock:)`` though no key of theirs is declared yet; `nil`: none are looked for.
    let programDirectory: @Sendable () -> URL?
    /// Called when a key is added while no store is in use (the application's engine says once
    /// that nothing syncs yet).
    let keyAddedWithoutStore: @Sendable () -> Void
    /// Runs work after a delay (a retry): by the time of the process, or of a test's driver.
    let schedule: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void
    /// The hook that makes the journals durable at exit and at ``Defaults/flushAll()``.
    private let flushHook = Atomic(-1)

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - programDirectory: The directory of the suites whose unpushed changes each
    ///     ``use(_:clock:)`` binds.
    ///   - keyAddedWithoutStore: Called when a key is added while no store is in use.
    ///   - schedule: Runs work once a duration has passed: how a failed call is retried.
    package init(
        programDirectory: @escaping @Sendable () -> URL? = { nil },
        keyAddedWithoutStore: @escaping @Sendable () -> Void = {},
        schedule: @escaping @Sendable (Duration, @escaping @Sendable () -> Void) -> Void
    ) {
        self.programDirectory = programDirectory
        self.keyAddedWithoutStore = keyAddedWithoutStore
        self.schedule = schedule
        let (stream, continuation) = AsyncStream<Job>.makeStream()
        jobs = continuation
        // It holds the engine until ``shutDown()`` ends the stream: the application's for good.
        Task.detached { [self] in
            for await job in stream {
                await self.run(job)
                self.flushJournals()
                let admitted = self.withState { state -> [CheckedContinuation<Bool, Never>] in
                    state.queuedJobs -= 1
                    // An earlier session's event counted in that session only, now gone.
                    guard case .event(_, let generation) = job, generation == state.session.generation else {
                        return []
                    }
                    state.session.queuedEvents -= 1
                    return Self.admitReporters(&state)
                }
                for reporter in admitted {
                    reporter.resume(returning: true)
                }
                self.resumeWaitersIfIdle()
                self.resumeQuietWaiters()
            }
            self.resumeQuietWaiters()
        }
        // What a job recorded and has not flushed yet is made durable before the suites' files.
        flushHook.store(
            SuiteRegistry.addFlushHook { [weak self] in self?.flushJournals() ?? [] }, ordering: .relaxed)
    }

    func withState<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        state.withLock { body(&$0) }
    }

    /// Runs `body` if the session `generation` is still the one in use: what a job learned from
    /// a store the application has since replaced is not the new store's.
    func withSession(_ generation: Int, _ body: (inout State) -> Void) {
        state.withLock { state in
            if state.session.generation == generation {
                body(&state)
            }
        }
    }

    func enqueue(_ job: Job) {
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
        if !isRedundant, case .terminated = jobs.yield(job) {
            // The engine was shut down: nothing runs the job.
            withState { $0.queuedJobs -= 1 }
            resumeQuietWaiters()
        }
    }

    /// Makes durable what the last job recorded (a push's outcome, a catch-up's versions, the last
    /// sync time); with no lock held. A local change is made durable before its suite's file by
    /// the persist listener, and a remote one before it is stored (``apply(_:)``). Returns the
    /// journals' failures (each logged once).
    @discardableResult
    func flushJournals() -> [DefaultsError] {
        let journals = withState { $0.suites.values.map(\.journal) }
        return journals.filter(\.hasUnwrittenEntries).compactMap { $0.flushLoggingFailure() }
    }

    /// Ends the job stream: the engine's task returns after the job running.
    func finishJobs() {
        jobs.finish()
        SuiteRegistry.removeFlushHook(flushHook.load(ordering: .relaxed))
    }

    // MARK: The store's events

    /// The store's `report`: queues `event` once the engine has room for it, waiting meanwhile, so
    /// that a store that falls behind holds its backlog (or stops reading) rather than the engine.
    ///
    /// The wait ends when the engine runs an event; and without queuing the event when the session
    /// is replaced (its events are passed over). A cancelled task's event is queued past the limit
    /// while its session is in use: nothing reported is lost.
    func report(_ event: SyncEvent, generation: Int) async {
        let id = UUID()
        let isAdmitted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // Checked and stored under one lock, so that no room made meanwhile is missed.
                let answer = withState { state -> Bool? in
                    guard state.session.generation == generation, !Task.isCancelled else { return false }
                    guard Self.hasRoom(state) else {
                        state.session.reporters.append((id, continuation))
                        return nil
                    }
                    state.session.queuedEvents += 1
                    return true
                }
                if let answer {
                    continuation.resume(returning: answer)
                }
            }
        } onCancel: {
            withState { state in
                state.session.reporters.firstIndex { $0.id == id }.map { state.session.reporters.remove(at: $0) }
            }?.continuation.resume(returning: false)
        }
        let isQueued = withState { state -> Bool in
            guard !isAdmitted else { return true }
            guard state.session.generation == generation else { return false }
            state.session.queuedEvents += 1
            return true
        }
        if isQueued {
            enqueue(.event(event, generation: generation))
        }
    }

    private static func hasRoom(_ state: State) -> Bool {
        state.session.queuedEvents < queuedEventLimit
    }

    /// Takes the reports that now have room, first come first, counting their events as queued:
    /// the caller resumes them once the lock is released.
    private static func admitReporters(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        var admitted: [CheckedContinuation<Bool, Never>] = []
        while !state.session.reporters.isEmpty, hasRoom(state) {
            admitted.append(state.session.reporters.removeFirst().continuation)
            state.session.queuedEvents += 1
        }
        return admitted
    }

    /// Queues `job` again after a pause: a push or catch-up failed while the store still looked
    /// connected (a lost connection is not always reported at once), and nothing else would retry
    /// it before the next connection. Retries stop once the store reports it is disconnected; its
    /// next connection catches up and pushes by itself.
    func retry(_ job: Job, session generation: Int, after delay: Duration = .seconds(1)) {
        schedule(delay) { [weak self] in
            guard let self else { return }
            if withState({ $0.session.isConnected && $0.session.generation == generation }) {
                enqueue(job)
            }
        }
    }

    // MARK: Jobs

    private func run(_ job: Job) async {
        guard
            let (store, generation) = withState({ state in state.session.store.map { ($0, state.session.generation) } })
        else { return }
        switch job {
        case .event(let event, let eventGeneration):
            guard eventGeneration == generation else { return }
            await handle(event, from: store, session: generation)
        case .push:
            withState { $0.isPushQueued = false }
            await push(to: store, session: generation)
        case .reconcile:
            reconcile()
            await push(to: store, session: generation)
        case .catchUp:
            if withState({ $0.session.isConnected }) {
                await catchUp(from: store, session: generation)
            }
        case .catchUpAdded:
            let names = withState { state -> Set<String> in
                state.isCatchUpAddedQueued = false
                guard state.session.isConnected else { return [] }  // the next connection catches up
                defer { state.session.addedSinceCatchUp = [] }
                return state.session.addedSinceCatchUp
            }
            if !names.isEmpty {
                await catchUp(names, from: store, session: generation)
            }
        }
    }

    private func handle(_ event: SyncEvent, from store: any DefaultsSyncStore, session generation: Int) async {
        switch event {
        case .connected:
            let isReconnection = withState { state in
                state.session.isConnected = true
                state.session.problems.clear(.connection, .value)
                return state.session.hasCaughtUpInFull
            }
            debug("connected to \(store.description)")
            if isReconnection {
                await resume(from: store, session: generation)
            } else {
                await catchUp(from: store, session: generation)
            }
        case .received(let records):
            apply(records)
        case .disconnected(let error):
            let message = "\(error)"
            let isNew = withState { state in
                defer {
                    state.session.isConnected = false
                    state.session.hasCaughtUp = false
                    state.session.problems.raise(.connection, message)
                }
                return state.session.problems.message(of: .connection) != message
            }
            if isNew {
                // A warning: the store reconnects by itself (a failover is routine); the status
                // keeps the reason for as long as it lasts.
                StorageEnvironment.logger.warning(
                    "iCloud keys are not syncing: \(message); retrying", metadata: ["store": "\(store.description)"])
            }
        }
    }
}
