import Foundation
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
/// taken (to read values and record entries).
final class SyncEngine: Sendable {

    static let shared = SyncEngine()

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
        var keys: Set<Defaults.Keys> = []
        var suites: [ObjectIdentifier: SyncedSuite] = [:]
        var session = SyncSession()
        var clock = HybridLogicalClock()
        var lastSync: Date?
        var queuedJobs = 0
        /// A push is queued and not started: later changes ride along with it.
        var isPushQueued = false
        var isCatchUpAddedQueued = false
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    /// The engine's state, journals' entries included: see the type's discussion. Its closures
    /// call nothing that could take it again (a nested access traps).
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
        if !isRedundant {
            jobs.yield(job)
        }
    }

    /// Queues `job` again after a pause: a push or catch-up failed while the store still looked
    /// connected (a lost connection is not always reported at once), and nothing else would retry
    /// it before the next connection. Retries stop once the store reports it is disconnected; its
    /// next connection catches up and pushes by itself.
    func retry(_ job: Job, after delay: Duration = .seconds(1)) {
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            if withState({ $0.session.isConnected }) {
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
                state.session.lastError = state.session.refusalProblem
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
                    state.session.lastError = message
                }
                return state.session.lastError != message
            }
            if isNew {
                // A warning: the store reconnects by itself (a failover is routine); the status
                // keeps the reason for as long as it lasts.
                Defaults.logger.warning(
                    "iCloud keys are not syncing: \(message); retrying", metadata: ["store": "\(store.description)"])
            }
        }
    }
}
