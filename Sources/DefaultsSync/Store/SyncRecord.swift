import Foundation

/// One synced value as a sync store holds it: the key's name, its encoded value and its version.
public struct SyncRecord: Sendable, Hashable {
    /// The key's name (keys are matched by name, as iCloud does).
    public var key: String
    /// The value as an XML property list, or `nil` when the key was reset or removed.
    public var value: Data?
    /// The value's version; of two records for a key, the one with the later timestamp wins.
    public var timestamp: SyncTimestamp

    /// Creates a record.
    public init(key: String, value: Data?, timestamp: SyncTimestamp) {
        self.key = key
        self.value = value
        self.timestamp = timestamp
    }
}
