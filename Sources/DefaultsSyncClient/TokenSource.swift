import DefaultsSyncProtocol
import Foundation

/// Where a connection's tokens come from: the app's provider, asked before each connection,
/// within a time limit, and held to the store's user and namespace (the end-to-end encryption's
/// salt and everything the device has synced belong to them).
struct TokenSource: Sendable {
    let user: String
    let namespace: String
    let provider: SyncServiceStore.TokenProvider
    /// How long the provider may take.
    let timeout: Duration

    /// A token from the provider for the store's user and namespace.
    func fresh() async throws(SyncServiceError) -> String {
        let token: String
        do {
            token = try await withThrowingTaskGroup(of: String.self) { group in
                group.addTask { try await provider() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw SyncServiceError.tokenProviderFailed("no token within \(timeout.components.seconds) s")
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
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
