import Synchronization

/// Permits per key: at most ``permits`` holders of one key at a time, the others waiting in the
/// order they came, at most ``maximumWaiting`` of them (more are refused with ``Full``). A waiter
/// whose task is cancelled leaves the queue. What ``OwnerTurns`` and ``UserDatabaseShare`` are
/// made of; a key that nobody holds or waits for is forgotten.
final class KeyedPermits<Key: Hashable & Sendable>: Sendable {
    /// Thrown when as many wait for the key as may.
    struct Full: Error {}

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Entry {
        var held = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var nextWaiter = 0
    }

    let permits: Int
    /// The most waiters of one key; `nil`: no bound.
    let maximumWaiting: Int?
    private let state = Mutex(State())

    init(permits: Int, maximumWaiting: Int? = nil) {
        precondition(permits > 0)
        self.permits = permits
        self.maximumWaiting = maximumWaiting
    }

    /// Runs `body` holding one of `key`'s permits, waiting for one first if need be.
    func withPermit<Value>(for key: Key, _ body: () async throws -> Value) async throws -> Value {
        try await acquire(key)
        defer { release(key) }
        return try await body()
    }

    /// The holders of `key`'s permits now.
    func holders(of key: Key) -> Int { state.withLock { $0.entries[key]?.held ?? 0 } }

    /// The waiters for `key`'s permits now.
    func waiters(for key: Key) -> Int { state.withLock { $0.entries[key]?.waiters.count ?? 0 } }

    private func acquire(_ key: Key) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock the cancellation handler takes: a cancellation either
                    // came before (and is seen here) or finds the waiter queued.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    var entry = state.entries[key] ?? Entry()
                    if entry.held < permits {
                        entry.held += 1
                        state.entries[key] = entry
                        return .success(())
                    }
                    if let maximumWaiting, entry.waiters.count >= maximumWaiting { return .failure(Full()) }
                    entry.waiters.append(Waiter(id: id, continuation: continuation))
                    state.entries[key] = entry
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let cancelled: CheckedContinuation<Void, any Error>? = state.withLock { state in
                guard let index = state.entries[key]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.entries[key]?.waiters.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Hands the permit to the first waiter, or gives it back.
    private func release(_ key: Key) {
        let next: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            if !entry.waiters.isEmpty {
                let waiter = entry.waiters.removeFirst()
                state.entries[key] = entry
                return waiter.continuation
            }
            entry.held -= 1
            state.entries[key] = entry.held > 0 ? entry : nil
            return nil
        }
        next?.resume()
    }
}
