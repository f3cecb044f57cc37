import Synchronization

/// The shared state of one ``Defaults/Updates`` sequence: its observation and the changes it has
/// delivered that no iterator has taken yet.
///
/// The suites hold the observation weakly and the observation holds only the queue, so dropping
/// the sequence and its iterators (or cancelling the task that iterates it) releases everything.
final class UpdatesBuffer: Sendable {
    private let core: ObservationCore
    private let queue: Queue

    init(keys: ObservedKeys, initial: Bool) {
        let queue = Queue()
        self.queue = queue
        core = ObservationCore(keys: keys) { change in queue.push(change) }
        core.start(initial: initial)
    }

    deinit {
        finish()
    }

    /// The next change, waiting for one if none is queued; `nil` once finished or cancelled.
    /// Cancelling the waiting task finishes the sequence and unregisters its observer at once.
    func next(isolation actor: isolated (any Actor)?) async -> ObservedChange? {
        if Task.isCancelled {
            finish()
            return nil
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: actor) { continuation in
                queue.take(or: continuation)
            }
        } onCancel: {
            finish()
        }
    }

    /// Stops observing and ends the sequence for every waiting and future `next()`.
    func finish() {
        core.invalidate()
        queue.finish()
    }

    final class Queue: Sendable {
        private struct State {
            var changes: [ObservedChange] = []
            var waiters: [CheckedContinuation<ObservedChange?, Never>] = []
            var isFinished = false
        }

        private let state = Mutex(State())

        func push(_ change: ObservedChange) {
            let waiter = state.withLock { state -> CheckedContinuation<ObservedChange?, Never>? in
                guard !state.isFinished else { return nil }
                guard state.waiters.isEmpty else { return state.waiters.removeFirst() }
                state.changes.append(change)
                return nil
            }
            waiter?.resume(returning: change)
        }

        func take(or continuation: CheckedContinuation<ObservedChange?, Never>) {
            let result = state.withLock { state -> ObservedChange?? in
                if !state.changes.isEmpty {
                    return .some(state.changes.removeFirst())
                }
                if state.isFinished {
                    return .some(nil)
                }
                state.waiters.append(continuation)
                return .none
            }
            if let result {
                continuation.resume(returning: result)
            }
        }

        func finish() {
            let waiters = state.withLock { state in
                state.isFinished = true
                state.changes = []
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters {
                waiter.resume(returning: nil)
            }
        }
    }
}
