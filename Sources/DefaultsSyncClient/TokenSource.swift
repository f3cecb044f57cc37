import DefaultsSyncProtocol
import Foundation
import Synchronization

/// Where a connection's tokens come from: the app's provider, asked before each connection,
/// within a time limit, and held to the store's user and namespace (the end-to-end encryption's
/// salt and everything the device has synced belong to them).
///
/// Each call of the provider runs in a task of its own, so that one that never returns (it
/// ignores cancellation, or awaits something never resumed) is left behind at the deadline
/// instead of holding up the reconnection loop. While a call left behind still runs, the provider
/// is not called again: a provider that hangs costs one task, not one per attempt.
final class TokenSource: Sendable {
    let user: String
    let namespace: String
    let provider: SyncServiceStore.TokenProvider
    /// How long the provider may take.
    let timeout: Duration
    /// When the running call of the provider started (the one awaited, or one left behind at its
    /// deadline); `nil` when none runs.
    private let runningCallStart = Mutex<ContinuousClock.Instant?>(nil)

    init(user: String, namespace: String, provider: @escaping SyncServiceStore.TokenProvider, timeout: Duration) {
        self.user = user
        self.namespace = namespace
        self.provider = provider
        self.timeout = timeout
    }

    /// A token from the provider for the store's user and namespace.
    func fresh() async throws(SyncServiceError) -> String {
        let token: String
        do {
            token = try await providersToken()
        } catch let error as SyncServiceError {
            throw error
        } catch {
            throw .tokenProviderFailed(String(describing: error))
        }
        // Only what a compact JWT is made of, so that nothing else reaches the request's header.
        guard token.utf8.allSatisfy(Self.isTokenByte),
            let claims = TokenClaims(unverifiedToken: token)
        else { throw .invalidToken }
        guard claims.user == user, claims.namespace == namespace else {
            throw .tokenMismatch(user: claims.user, namespace: claims.namespace)
        }
        return token
    }

    /// What the provider returns within ``timeout``; a call still running then is cancelled and
    /// left behind, and until it returns the provider is not called again.
    private func providersToken() async throws -> String {
        let now = ContinuousClock.now
        let earlierStart = runningCallStart.withLock { start -> ContinuousClock.Instant? in
            defer { start = start ?? now }
            return start
        }
        if let earlierStart {
            throw SyncServiceError.tokenProviderFailed(
                "its call of \(earlierStart.duration(to: now).components.seconds) s ago has not returned yet, "
                    + "and it is not called again until it does")
        }
        let answer = PendingReply<String>()
        let call = Task {
            let result: Result<String, any Error>
            do {
                result = .success(try await provider())
            } catch {
                result = .failure(error)
            }
            runningCallStart.withLock { $0 = nil }
            answer.resolve(result)
        }
        let timeout = timeout
        return try await withThrowingTaskGroup(of: String.self) { group in
            // Both children end when cancelled, whatever the provider does.
            group.addTask { try await answer.value() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw SyncServiceError.tokenProviderFailed("no token within \(timeout.components.seconds) s")
            }
            defer {
                group.cancelAll()
                call.cancel()
            }
            return try await group.next()!
        }
    }

    /// A byte of base64url, or the dot between a JWT's parts.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}
