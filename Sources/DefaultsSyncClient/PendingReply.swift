import Synchronization

/// An answer awaited by one task and given by another, once, in whichever order they come: the
/// server's reply to one message (given by the connection's reader), or the token provider's
/// token (given by the call's own task, which may never end).
final class PendingReply<Value: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Value, any Error>?)
        case done(Result<Value, any Error>)
    }

    private let state = Mutex<State>(.waiting(nil))

    /// Gives the answer; any after the first is ignored.
    func resolve(_ result: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .done(result)
            return continuation
        }
        continuation?.resume(with: result)
    }

    /// The answer; a cancelled wait ends with `CancellationError`.
    func value() async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let result = state.withLock { state -> Result<Value, any Error>? in
                    switch state {
                    case .done(let result):
                        return result
                    case .waiting:
                        state = .waiting(continuation)
                        return nil
                    }
                }
                if let result {
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            resolve(.failure(CancellationError()))
        }
    }
}
