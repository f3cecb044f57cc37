import Foundation

/// Why the sync service could not be used; `Defaults.iCloud.status` and the log show it.
public enum SyncServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not `ws://host:port` or `wss://host`.
    case invalidURL(String)
    /// The token is not a JWT naming a user and a namespace.
    case invalidToken
    /// The server refused the token (expired, signed with another key, or malformed); the store
    /// keeps retrying slowly, but only a new token helps.
    case unauthorized(reason: String)
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
        case .closed(let code, let reason):
            "The sync service closed the connection" + (code.map { " (\($0))" } ?? "")
                + (reason.map { ": \($0)" } ?? "")
        case .notConnected: "Not connected to the sync service"
        case .timedOut(let seconds): "The sync service did not answer within \(seconds) s"
        case .failed(let message): "The sync service failed: \(message)"
        }
    }
}
