import PostgresNIO
import Synchronization

extension PostgresSyncStore {
    /// Runs `operation` on `connection`, or throws when the server has not answered within
    /// ``responseTimeout``; the connection is then closed, so that the listen ends and ``run(reporting:)``
    /// reconnects.
    ///
    /// Every call on a connection goes through here. A server that stops answering (frozen, or
    /// gone without closing the socket) would otherwise hold the call forever; and PostgresNIO
    /// (1.33) never completes a query written to a connection that has just closed.
    func answer<Value: Sendable>(
        from connection: PostgresConnection,
        _ what: String,
        describingFailure: Bool = false,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        do {
            return try await Self.withDeadline(responseTimeout, operation)
        } catch let timeout as DeadlinePassed {
            try? await connection.close()
            throw PostgresSyncError("\(endpoint): no answer \(what) within \(timeout.limit); reconnecting")
        } catch let error where describingFailure {
            // PostgresNIO's own description is generic: the caller's status shows this one.
            throw PostgresSyncError(error, endpoint: endpoint)
        }
    }

    /// Connects to the first of ``servers`` that takes the session (``PostgresServers``), or
    /// throws when the connection, its log-in and that check have not finished within
    /// ``responseTimeout`` for one server (the TCP connect alone has PostgresNIO's own timeout).
    /// A connection that completes after that is closed.
    func connect() async throws -> PostgresConnection {
        let (logger, limit) = (logger, responseTimeout)
        let id = Self.connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue
        do {
            let servers = servers
            return try await servers.connect { configuration in
                try await Self.withDeadline(
                    limit, { try await servers.open(configuration, id: id, logger: logger) },
                    discardingLate: { try? await $0?.close() })
            }.connection
        } catch let timeout as DeadlinePassed {
            throw PostgresSyncError("\(endpoint): no answer while connecting within \(timeout.limit)")
        }
    }

    /// Until the listen ends, asks the server a trivial question every ``livenessCheckInterval``;
    /// throws once it has not answered within ``responseTimeout`` (the connection is then closed,
    /// which ends the listen). A lost connection is not always reported: a server machine that
    /// vanishes leaves the socket open, with nothing more to read.
    func checkLiveness(of connection: PostgresConnection) async throws {
        let logger = logger
        while true {
            try await Task.sleep(for: livenessCheckInterval)
            try await answer(from: connection, "to a liveness check") {
                for try await _ in try await connection.query("SELECT 1", logger: logger) {}
            }
        }
    }

    struct DeadlinePassed: Error {
        let limit: Duration
    }

    /// Returns what `operation` returns, or throws ``DeadlinePassed`` once `limit` has passed, or
    /// `CancellationError` when the calling task is cancelled, whichever comes first.
    ///
    /// The operation runs in a task of its own, so that the caller is free even when the
    /// operation never ends (it is cancelled, and may stay suspended: a PostgresNIO query written
    /// to a closed connection is never completed nor cancellable). A result that arrives too late
    /// is given to `discard`.
    static func withDeadline<Value: Sendable>(
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
                    if outcome.finish(.failure(DeadlinePassed(limit: limit))) {
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
