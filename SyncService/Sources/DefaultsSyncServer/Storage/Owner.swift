import Crypto
import Foundation

/// Whose records: one user's, in one namespace. Every query and every notification is for one.
public struct Owner: Hashable, Sendable, CustomStringConvertible {
    public let user: String
    public let namespace: String

    public init(user: String, namespace: String) {
        self.user = user
        self.namespace = namespace
    }

    /// What a notification names the owner by: short, fixed-length, free of the user's name (the
    /// payload of a notification has a size limit, and the channel is the whole database's).
    var tag: String {
        let digest = SHA256.hash(data: Data("\(user)\n\(namespace)".utf8))
        return digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    public var description: String { "user \(user.debugDescription), namespace \(namespace.debugDescription)" }
}
