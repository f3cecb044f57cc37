/// Thrown by ``DefaultsSyncStore/push(_:)`` when the store stored every record but these, which
/// it will never accept (a key name or value beyond what it can hold).
///
/// The library sets the refused keys aside, reports them (``SyncStatus/refusedKeys``,
/// ``SyncStatus/lastError`` and the log, at warning level) and goes on syncing every other key;
/// a refused key is tried again when its value changes.
public struct SyncRecordsRefused: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why each refused key was refused, by key name.
    public var reasons: [String: String]

    /// Creates the error for the refused keys, each with why.
    public init(_ reasons: [String: String]) {
        self.reasons = reasons
    }

    public var description: String {
        let keys = reasons.keys.sorted()
        return "the store refused \(keys.count) key(s): "
            + keys.map { "\"\($0.debugDescription.dropFirst().dropLast())\" (\(reasons[$0] ?? ""))" }
            .joined(separator: ", ")
    }
}
