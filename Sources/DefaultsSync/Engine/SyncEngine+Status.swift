import DefaultsStorage
import Foundation
import Logging

extension SyncEngine {
    // MARK: Waiting and status

    /// Where the change `entry` of `name` in `synced` stands, by the one rule
    /// (``SyncRules/standing(_:refused:isManaged:)``), with what this engine knows: its session's
    /// refusals and the suite's administrator.
    static func standing(
        of name: String, _ entry: SyncJournal.Entry?, in synced: SyncedSuite, _ state: State
    ) -> SyncRules.Standing? {
        let refusal = state.session.refused[name].map { (version: $0.timestamp, reason: $0.reason) }
        return SyncRules.standing(entry, refused: refusal, isManaged: synced.isManaged(name))
    }

    /// The timestamps of the pending changes: not on the store yet, and not set aside.
    private static func pendingTimestamps(_ state: State) -> [SyncTimestamp] {
        state.suites.values.flatMap { synced in
            synced.names.compactMap { name -> SyncTimestamp? in
                let entry = synced.journal.entry(forKey: name)
                return standing(of: name, entry, in: synced, state) == .pending ? entry?.timestamp : nil
            }
        }
    }

    private static func isIdle(_ state: State) -> Bool {
        let session = state.session
        return session.store == nil
            || (session.isConnected && session.hasCaughtUp && state.queuedJobs == 0 && session.queuedEvents == 0
                && pendingTimestamps(state).isEmpty)
    }

    package func waitForSyncCompletion() async {
        guard withState({ $0.session.store != nil }) else { return }
        enqueue(.reconcile)
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = withState { state -> Bool in
                    if Self.isIdle(state) || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            withState { $0.waiters.removeValue(forKey: id) }?.resume()
        }
        flushJournals()
    }

    func resumeWaitersIfIdle() {
        let waiters = withState { state -> [CheckedContinuation<Void, Never>] in
            // Waiters first: `isIdle` reads every synced key's journal entry.
            guard !state.waiters.isEmpty, Self.isIdle(state) else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Returns once every job queued has run, those it queued included, whether or not the store
    /// is connected: what a test's driver waits for after each step. The store's later events
    /// are not waited for.
    package func waitUntilQuiet() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isQuiet = withState { state -> Bool in
                guard state.queuedJobs > 0 else { return true }
                state.quietWaiters.append(continuation)
                return false
            }
            if isQuiet { continuation.resume() }
        }
    }

    func resumeQuietWaiters() {
        let waiters = withState { state -> [CheckedContinuation<Void, Never>] in
            guard state.queuedJobs == 0 else { return [] }
            defer { state.quietWaiters = [] }
            return state.quietWaiters
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Ends this engine: it stops syncing every key, leaves the store, and runs no job after the
    /// one running. For engines a test made; the application's engine runs as long as the process.
    package func shutDown() {
        removeAll()
        let (task, reporters, waiters) = withState { state in
            defer {
                state.session = SyncSession(generation: state.session.generation + 1)
                state.waiters = [:]
            }
            return (state.session.runTask, state.session.reporters.map(\.continuation), Array(state.waiters.values))
        }
        task?.cancel()
        for reporter in reporters {
            reporter.resume(returning: false)
        }
        for waiter in waiters {
            waiter.resume()
        }
        finishJobs()
    }

    package var status: SyncStatus {
        withState { state in
            let pending = Self.pendingTimestamps(state)
            let now = state.clock.physicalTime
            let oldest = pending.lazy.map(\.wallTime).filter { $0 > 0 }.min()
            let session = state.session
            return SyncStatus(
                store: session.store?.description,
                isConnected: session.isConnected,
                pendingChanges: pending.count,
                lastSync: state.lastSync,
                lastError: session.problems.current,
                refusedKeys: session.refused.keys.sorted(),
                keptAsideKeys: session.keptAside.keys.sorted(),
                lag: session.store == nil ? nil : .milliseconds(max(0, now - (oldest ?? now)))
            )
        }
    }

    // MARK: Reporting

    /// A call to the store failed while it looked connected (a lost connection is reported by the
    /// store itself): said in the status's `lastError`, and logged once while it stays the same.
    /// Of the session `generation`: a store replaced meanwhile is not the new one's problem.
    func noteFailure(_ what: String, _ error: any Error, store: any DefaultsSyncStore, session generation: Int) {
        let message = "\(error)"
        var isNew = false
        withSession(generation) { state in
            isNew = state.session.problems.message(of: .call) != message
            state.session.problems.raise(.call, message)
        }
        if isNew {
            StorageEnvironment.logger.warning(
                "iCloud keys \(what): \(message)", metadata: ["store": "\(store.description)"])
        }
    }

    /// A call to the store succeeded: a failure it reported is over.
    func clearFailure(session generation: Int) {
        withSession(generation) { $0.session.problems.clear(.call) }
    }

    func debug(_ message: @autoclosure () -> String) {
        if isDebug.load(ordering: .relaxed) {
            StorageEnvironment.logger.info("[Defaults.iCloud] \(message())")
        }
    }
}
