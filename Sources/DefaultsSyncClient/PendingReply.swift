import DefaultsSyncProtocol
import Synchronization

/// The answer to one message, awaited by its sender and given by the connection's reader, in
/// whichever order they come.
final class PendingReply: Sendable {
    private enum State {
        case waiting(CheckedContinuation<ServerMessage, any Error>?)
        case done(Result<ServerMessage, any Error>)
    }

    private let state = Mutex<State>(.waiting(nil))

    func resolve(_ result: Result<ServerMessage, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<ServerMessage, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .done(result)
            return continuation
        }
        continuation?.resume(with: result)
    }

    /// The answer; a cancelled wait ends with `CancellationError`.
    func value() async throws -> ServerMessage {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let result = state.withLock { state -> Result<ServerMessage, any Error>? in
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
