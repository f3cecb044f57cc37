import Synchronization

/// A limit on how long an operation on a PostgreSQL connection may take: every call of the
/// direct store and every transaction of the sync service goes through ``run(_:_:discardingLate:)``.
///
/// PostgresNIO (1.33) never completes a query written to a connection that has just closed, nor
/// lets it be cancelled: without a deadline, a push in flight when the primary's machine is lost
/// would wait for ever, and everything queued behind it (its owner's next pushes) too.
public enum Deadline {
    /// The deadline passed before the operation ended.
    public struct Passed: Error, Sendable {
        public let limit: Duration
    }

    /// Returns what `operation` returns, or throws ``Passed`` once `limit` has passed, or
    /// `CancellationError` when the calling task is cancelled, whichever comes first.
    ///
    /// The operation runs in a task of its own, so that the caller is free even when the
    /// operation never ends (it is cancelled, and may stay suspended: a PostgresNIO query written
    /// to a closed connection is never completed nor cancellable). A result that arrives too late
    /// is given to `discard`.
    public static func run<Value: Sendable>(
        _ limit: Duration,
        _ operation: @escaping @Sendable () async throws -> Value,
        discardingLate discard: (@Sendable (Value) async -> Void)? = nil
    ) async throws -> Value {
        let outcome = Outcome<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.start(continuation)
                let work = Task {
                    do {
                        let value = try await operation()
                        if !outcome.finish(.success(value)) {
                            await discard?(value)
                        }
                    } catch {
                        outcome.finish(.failure(error))
                    }
                }
                let timer = Task {
                    try await Task.sleep(for: limit)
                    if outcome.finish(.failure(Passed(limit: limit))) {
                        work.cancel()
                    }
                }
                outcome.onFinish {
                    timer.cancel()
                    work.cancel()
                }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// The first of an operation's result, its deadline and its caller's cancellation.
    private final class Outcome<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value, any Error>?
            var early: Result<Value, any Error>?
            var isFinished = false
            var cleanup: (@Sendable () -> Void)?
        }

        private let state = Mutex(State())

        /// Hands over the continuation; resumes it at once when the outcome came first (a
        /// cancellation before the continuation existed).
        func start(_ continuation: CheckedContinuation<Value, any Error>) {
            let early = state.withLock { state -> Result<Value, any Error>? in
                guard let early = state.early else {
                    state.continuation = continuation
                    return nil
                }
                return early
            }
            if let early {
                continuation.resume(with: early)
            }
        }

        /// Runs `cleanup` once the outcome is known (at once if it already is).
        func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
            let isFinished = state.withLock { state -> Bool in
                if !state.isFinished { state.cleanup = cleanup }
                return state.isFinished
            }
            if isFinished { cleanup() }
        }

        /// Settles the outcome; returns whether this call did (only the first does).
        @discardableResult
        func finish(_ result: Result<Value, any Error>) -> Bool {
            let settled = state.withLock {
                state -> (CheckedContinuation<Value, any Error>?, (@Sendable () -> Void)?)? in
                guard !state.isFinished else { return nil }
                state.isFinished = true
                defer {
                    state.continuation = nil
                    state.cleanup = nil
                }
                if state.continuation == nil { state.early = result }
                return (state.continuation, state.cleanup)
            }
            guard let (continuation, cleanup) = settled else { return false }
            continuation?.resume(with: result)
            cleanup?()
            return true
        }
    }
}
