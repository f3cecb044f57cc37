import DefaultsSyncProtocol
import Foundation
import Synchronization
import TestSupport
import Testing

@_spi(Testing) @testable import DefaultsSyncClient

/// A token provider that never returns holds up neither a connection attempt nor the reconnection
/// loop: it is left behind at its deadline, reported, and not called again while it still runs.
@Suite(.mayBlock)
struct TokenSourceTests {
    @Test(.timeLimit(.minutes(1)))
    func aProviderThatNeverReturnsIsLeftBehindAndNotCalledAgainUntilItReturns() async throws {
        let provider = HangingProvider()
        // A deadline that a busy machine's scheduler meets: the provider's task may start late.
        let source = TokenSource(
            user: "u", namespace: "com.example.app", provider: { try await provider.call() },
            timeout: .seconds(2))
        #expect(Self.failure(of: await Self.attempt(source))?.contains("no token within") == true)
        // The first call still runs: it is not called again, and that is what is reported.
        let second = Self.failure(of: await Self.attempt(source))
        #expect(second?.contains("has not returned yet") == true, "\(second ?? "a token")")
        try await waitUntil("the first call made") { provider.calls >= 1 }
        #expect(provider.calls == 1)
        // Once it returns (late, and unused), the next attempt calls it again and gets a token.
        provider.release()
        let token = try await poll("a token from the next call") { try? await source.fresh() }
        #expect(token == HangingProvider.token)
        #expect(provider.calls == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func theReconnectionLoopGoesOnPastAProviderThatNeverReturns() async throws {
        let provider = HangingProvider()
        var options = SyncServiceStore.Options()
        options.responseTimeout = .seconds(1)
        options.reconnectDelays = .milliseconds(1)...(.milliseconds(5))
        // Nothing listens there; no attempt gets as far as connecting.
        let store = try SyncServiceStore(
            url: "ws://127.0.0.1:9", user: "u", namespace: "com.example.app", options: options
        ) { try await provider.call() }
        let failures = Mutex<[String]>([])
        let running = Task {
            await store.run { event in
                if case .disconnected(let error) = event {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        defer { running.cancel() }
        try await waitUntil("three attempts failed") { failures.withLock { $0.count } >= 3 }
        let reported = failures.withLock { $0 }
        #expect(reported.first?.contains("The token provider gave no token: no token within") == true, "\(reported)")
        #expect(reported.dropFirst().allSatisfy { $0.contains("has not returned yet") }, "\(reported)")
        try await waitUntil("the first call made") { provider.calls >= 1 }
        #expect(provider.calls == 1)
        provider.release()
    }

    // MARK: Helpers

    /// What one `fresh()` gave: a token or a failure.
    private static func attempt(_ source: TokenSource) async -> Result<String, SyncServiceError> {
        do {
            return .success(try await source.fresh())
        } catch {
            return .failure(error)
        }
    }

    /// The reason a provider's failure gives, or `nil` for a token or another failure.
    private static func failure(of result: Result<String, SyncServiceError>) -> String? {
        guard case .failure(.tokenProviderFailed(let reason)) = result else { return nil }
        return reason
    }
}

/// A token provider whose first call never returns until released, ignoring cancellation; its
/// later calls return a token at once.
final class HangingProvider: Sendable {
    /// A token of no server's key, naming user `u` and namespace `com.example.app`.
    static let token = unsignedToken

    private struct State {
        var calls = 0
        var isReleased = false
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var calls: Int { state.withLock { $0.calls } }

    func call() async throws -> String {
        let isFirst = state.withLock { state in
            state.calls += 1
            return state.calls == 1
        }
        if isFirst {
            // No cancellation handler: cancelling the call does not end it.
            await withCheckedContinuation { continuation in
                let isReleased = state.withLock { state in
                    if !state.isReleased { state.waiting = continuation }
                    return state.isReleased
                }
                if isReleased { continuation.resume() }
            }
        }
        return Self.token
    }

    /// Lets the first call return.
    func release() {
        state.withLock { state in
            state.isReleased = true
            defer { state.waiting = nil }
            return state.waiting
        }?.resume()
    }
}
