import DefaultsSyncProtocol
import Foundation

/// Why the sync service could not be used; `Defaults.iCloud.status` and the log show it.
public enum SyncServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not `ws://host:port` or `wss://host`.
    case invalidURL(String)
    /// The token is not a JWT naming a user and a namespace.
    case invalidToken
    /// The server refused the token (expired, revoked, signed with another key, or malformed), or
    /// closed the connection when it expired: the store asks its token provider for a new one and
    /// connects again, more slowly each time the new one is refused too.
    case unauthorized(reason: String)
    /// The token provider gave a token for another user or namespace than the store's.
    case tokenMismatch(user: String, namespace: String)
    /// The token provider threw, or gave no token within the response timeout, or its call left
    /// at that timeout has not returned yet (it is not called again until it does); the store asks
    /// again, more slowly each time.
    case tokenProviderFailed(String)
    /// The connection closed; the store reconnects by itself.
    case closed(code: String?, reason: String?)
    /// Not connected right now; the library tries again once connected.
    case notConnected
    /// The server did not answer within the response timeout; the store reconnects.
    case timedOut(seconds: Int64)
    /// The server could not do what was asked (its database did not answer, too many messages).
    case failed(String)

    public var description: String {
        switch self {
        case .invalidURL(let url): "The sync service URL \"\(url)\" is not ws://host:port or wss://host"
        case .invalidToken: "The sync service token is not a JWT naming a user (sub) and a namespace (ns)"
        case .unauthorized(let reason): "The sync service refused the token: \(reason)"
        case .tokenMismatch(let user, let namespace):
            "The token provider gave a token for user \(user), namespace \(namespace), not this store's"
        case .tokenProviderFailed(let reason): "The token provider gave no token: \(reason)"
        case .closed(let code, let reason):
            "The sync service closed the connection" + (code.map { " (\($0))" } ?? "")
                + (reason.map { ": \($0)" } ?? "")
        case .notConnected: "Not connected to the sync service"
        case .timedOut(let seconds): "The sync service did not answer within \(seconds) s"
        case .failed(let message): "The sync service failed: \(message)"
        }
    }
}

extension SyncServiceError {
    /// The wait the server asked for before the next connection, when it closed this one with a
    /// reason naming one (`retry after N s`).
    var retryAfter: Duration? {
        guard case .closed(_, let reason) = self else { return nil }
        return SyncCloseReason.retryAfter(closeReason: reason)
    }
}
