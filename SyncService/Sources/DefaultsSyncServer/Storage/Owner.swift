import Crypto
import DefaultsSyncSQL
import Foundation

/// Whose records: one user's, in one namespace. Every query and every notification is for one.
public struct Owner: Hashable, Sendable, CustomStringConvertible {
    public let user: String
    public let namespace: String

    public init(user: String, namespace: String) {
        self.user = user
        self.namespace = namespace
    }

    /// What a notification names the owner by: short and fixed-length (a notification's payload
    /// has a size limit). The user's length in bytes comes first, so that no two owners share it
    /// (user `a` with namespace `b\nc` is not user `a\nb` with namespace `c`).
    var tag: String {
        let digest = SHA256.hash(data: Data("\(user.utf8.count):\(user)\(namespace)".utf8))
        let hex = Array("0123456789abcdef".utf8)
        // Computed on every push and every announcement: no `String(format:)`.
        return String(decoding: digest.prefix(16).flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xf)]] }, as: UTF8.self)
    }

    /// The owner's rows of the values table, and the statements on them.
    var rows: SyncRows { SyncTable.service(user: user, namespace: namespace) }

    public var description: String { "user \(user.debugDescription), namespace \(namespace.debugDescription)" }
}
