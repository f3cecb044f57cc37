import Defaults
import Foundation
import Synchronization

/// A `DefaultsSyncStore` held in memory, for tests: one simulated machine's connection to an
/// ``InMemorySyncServer`` that every machine of the test shares.
///
/// ```swift
/// import Defaults
/// import DefaultsSyncTesting
///
/// let server = InMemorySyncServer()
/// let store = InMemorySyncStore(server: server, name: "laptop")
/// Defaults.iCloud.use(store)
///
/// store.disconnect()  // offline: pushes and fetches fail, and the library keeps changes
/// store.reconnect()   // back: the library catches up and pushes
/// store.failNextPushes(2)
/// server.refusedKeys = ["tooLong": "the name is too long"]
/// ```
///
/// It behaves as the library expects a store to: ``run(reporting:)`` reports `.connected`, each
/// change another machine pushes as `.received`, and a disconnection as `.disconnected`; it
/// answers ``changesSinceLastConnection()`` with what it missed, by change number. A call made
/// while disconnected throws ``InMemorySyncError/notConnected(store:)``. Nothing waits on a timer
/// unless ``latency`` is set.
public final class InMemorySyncStore: DefaultsSyncStore {
    public let description: String
    /// The server this store connects to.
    public let server: InMemorySyncServer

    private struct State {
        var isReachable = true
        var latency: Duration = .zero
        var failingPushes: (count: Int, error: any Error)?
        var failingFetches: (count: Int, error: any Error)?
        /// The current connection's number; each connection of ``run(reporting:)`` takes the next.
        var generation = 0
        var reachabilityWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let id: Int
    private let state = Mutex(State())

    /// A store of `server`, named `name` in its description (for example a machine's name).
    public init(server: InMemorySyncServer, name: String = "machine") {
        self.server = server
        id = server.makeStoreID()
        description = "in-memory sync store \(name)"
    }

    // MARK: Controls

    /// How long each call, and each delivery of another machine's changes, waits first; zero
    /// (no wait) unless set.
    public var latency: Duration {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = max(.zero, newValue) } }
    }

    /// Whether the store is connected now: running, and not disconnected.
    public var isConnected: Bool {
        server.isConnected(store: id)
    }

    /// Loses the connection: ``run(reporting:)`` reports `.disconnected`, deliveries not reported
    /// yet are dropped, and every call throws until ``reconnect()``.
    public func disconnect() {
        state.withLock { $0.isReachable = false }
        server.disconnect(store: id)
    }

    /// Ends a ``disconnect()``: ``run(reporting:)`` connects again and reports `.connected`.
    public func reconnect() {
        let waiters = state.withLock { state in
            state.isReachable = true
            defer { state.reachabilityWaiters = [:] }
            return Array(state.reachabilityWaiters.values)
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Makes the next `count` pushes throw `error` without reaching the server.
    public func failNextPushes(
        _ count: Int, with error: any Error = InMemorySyncError.injected("a push failed, as the test asked")
    ) {
        state.withLock { $0.failingPushes = count > 0 ? (count, error) : nil }
    }

    /// Makes the next `count` fetches (``timestamps()``, ``records(forKeys:)``,
    /// ``changesSinceLastConnection()``) throw `error` without reaching the server.
    public func failNextFetches(
        _ count: Int, with error: any Error = InMemorySyncError.injected("a fetch failed, as the test asked")
    ) {
        state.withLock { $0.failingFetches = count > 0 ? (count, error) : nil }
    }

    // MARK: DefaultsSyncStore

    public func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        while !Task.isCancelled {
            await waitUntilReachable()
            guard !Task.isCancelled else { break }
            let (deliveries, continuation) = AsyncStream<InMemorySyncServer.Delivery>.makeStream()
            let generation = state.withLock { state in
                state.generation += 1
                return state.generation
            }
            server.connect(store: id, .init(generation: generation, deliveries: continuation))
            // Disconnected meanwhile: the connection was never made.
            if !state.withLock({ $0.isReachable }) {
                server.disconnect(store: id, generation: generation)
            }
            if server.isConnected(store: id, generation: generation) {
                await report(.connected)
                await withTaskCancellationHandler {
                    for await delivery in deliveries {
                        await pause()
                        // Dropped when the connection ended after it was queued.
                        guard server.isConnected(store: id, generation: generation) else { break }
                        switch delivery {
                        case .records(let records, let number):
                            await report(.received(records))
                            server.advance(store: id, to: number)
                        case .ownChanges(let number):
                            server.advance(store: id, to: number)
                        }
                    }
                } onCancel: {
                    continuation.finish()
                }
                server.disconnect(store: id, generation: generation)
            }
            guard !Task.isCancelled else { break }
            await report(.disconnected(InMemorySyncError.notConnected(store: description)))
        }
    }

    public func timestamps() async throws -> [String: SyncTimestamp] {
        try await beginFetch()
        return server.timestamps()
    }

    public func changesSinceLastConnection() async throws -> [SyncRecord]? {
        try await beginFetch()
        return server.changesSincePosition(of: id)
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        try await beginFetch()
        return server.records(forKeys: keys)
    }

    public func push(_ records: [SyncRecord]) async throws {
        try await beginCall()
        if let error = take(\.failingPushes) {
            throw error
        }
        let refused = server.push(records, from: id)
        if !refused.isEmpty {
            throw SyncRecordsRefused(refused)
        }
    }

    // MARK: Calls

    /// Waits the latency, then throws when not connected.
    private func beginCall() async throws {
        await pause()
        try Task.checkCancellation()
        guard isConnected else { throw InMemorySyncError.notConnected(store: description) }
    }

    /// ``beginCall()``, then a failure asked for with ``failNextFetches(_:with:)``.
    private func beginFetch() async throws {
        try await beginCall()
        if let error = take(\.failingFetches) {
            throw error
        }
    }

    /// Counts one failure of those asked for at `path`, and returns its error; `nil` when none is.
    private func take(_ path: WritableKeyPath<State, (count: Int, error: any Error)?>) -> (any Error)? {
        state.withLock { state in
            guard let failing = state[keyPath: path] else { return nil }
            state[keyPath: path] = failing.count > 1 ? (failing.count - 1, failing.error) : nil
            return failing.error
        }
    }

    private func pause() async {
        let latency = state.withLock { $0.latency }
        if latency > .zero {
            try? await Task.sleep(for: latency)
        }
    }

    private func waitUntilReachable() async {
        let waiter = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isReachable = state.withLock { state in
                    if state.isReachable || Task.isCancelled { return true }
                    state.reachabilityWaiters[waiter] = continuation
                    return false
                }
                if isReachable {
                    continuation.resume()
                }
            }
        } onCancel: {
            state.withLock { $0.reachabilityWaiters.removeValue(forKey: waiter) }?.resume()
        }
    }
}
