/// The server's limits, as its welcome tells them.
///
/// What one user stores in one namespace counts every byte the server keeps for it: each key's
/// name, value (none for a removal) and origin. A removal is kept as a tombstone, counted as a
/// key, until it expires after ``tombstoneDays``.
public struct ServiceLimits: Codable, Sendable, Hashable {
    /// The largest value, in bytes (iCloud's: 1 MB).
    public var valueBytes: Int
    /// The most bytes one user may store in one namespace: names, values and origins (iCloud's
    /// for values: 1 MB).
    public var namespaceBytes: Int
    /// The most keys one user may store in one namespace, removals not yet expired included
    /// (iCloud's: 1,024).
    public var namespaceKeys: Int
    /// The largest message the server reads; a larger one closes the connection.
    public var messageBytes: Int
    /// Messages per second one user may send, on average, over all their connections to one
    /// instance.
    public var messagesPerSecond: Double
    /// The longest key name, in bytes of UTF-8 (well under what PostgreSQL's index holds).
    public var keyBytes: Int
    /// The longest origin (the name a device signs its versions with), in bytes of UTF-8.
    public var originBytes: Int
    /// The most namespaces one user may write to.
    public var userNamespaces: Int
    /// The most connections one user may hold to one instance.
    public var userConnections: Int
    /// Days after which the server forgets a removal. A device offline for longer does not learn
    /// of it: it keeps the removed key, and its next change of that key stores it again.
    /// `defaults-sync-server` takes them within ``tombstoneDaysAllowed``.
    public var tombstoneDays: Int

    /// The days a removal may be kept: 100 years is as good as never forgetting, and with more
    /// than about 2.4 million days its expiry would fall before PostgreSQL's earliest date
    /// (4713 BC), or past its 32-bit days, and every push would fail.
    public static let tombstoneDaysAllowed = 1...36_500

    /// iCloud's key-value store limits, a 4 MB message, 50 messages a second, key names of 512
    /// bytes, origins of 128, 64 namespaces and 32 connections per user, removals kept 90 days.
    public static let standard = ServiceLimits(
        valueBytes: 1_048_576, namespaceBytes: 1_048_576, namespaceKeys: 1024, messageBytes: 4 * 1_048_576,
        messagesPerSecond: 50)

    public init(
        valueBytes: Int, namespaceBytes: Int, namespaceKeys: Int, messageBytes: Int, messagesPerSecond: Double,
        keyBytes: Int = 512, originBytes: Int = 128, userNamespaces: Int = 64, userConnections: Int = 32,
        tombstoneDays: Int = 90
    ) {
        self.valueBytes = valueBytes
        self.namespaceBytes = namespaceBytes
        self.namespaceKeys = namespaceKeys
        self.messageBytes = messageBytes
        self.messagesPerSecond = messagesPerSecond
        self.keyBytes = keyBytes
        self.originBytes = originBytes
        self.userNamespaces = userNamespaces
        self.userConnections = userConnections
        self.tombstoneDays = tombstoneDays
    }

    private enum CodingKeys: String, CodingKey {
        case valueBytes, namespaceBytes, namespaceKeys, messageBytes, messagesPerSecond, keyBytes, originBytes,
            userNamespaces, userConnections, tombstoneDays
    }

    /// A server older than a limit does not tell it: the standard one stands in.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let standard = Self.standard
        valueBytes = try container.decode(Int.self, forKey: .valueBytes)
        namespaceBytes = try container.decode(Int.self, forKey: .namespaceBytes)
        namespaceKeys = try container.decode(Int.self, forKey: .namespaceKeys)
        messageBytes = try container.decode(Int.self, forKey: .messageBytes)
        messagesPerSecond = try container.decode(Double.self, forKey: .messagesPerSecond)
        keyBytes = try container.decodeIfPresent(Int.self, forKey: .keyBytes) ?? standard.keyBytes
        originBytes = try container.decodeIfPresent(Int.self, forKey: .originBytes) ?? standard.originBytes
        userNamespaces = try container.decodeIfPresent(Int.self, forKey: .userNamespaces) ?? standard.userNamespaces
        userConnections =
            try container.decodeIfPresent(Int.self, forKey: .userConnections) ?? standard.userConnections
        tombstoneDays = try container.decodeIfPresent(Int.self, forKey: .tombstoneDays) ?? standard.tombstoneDays
    }
}
