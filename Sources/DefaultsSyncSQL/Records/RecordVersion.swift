import DefaultsSyncProtocol

/// A record's version, and the one rule of which of two versions of a key wins: the later wall
/// time, then the larger counter, then the origin in byte order (as PostgreSQL's `"C"` collation
/// compares the `clock_origin` column). The upsert (``SyncRows/store(_:savepoint:on:logger:)``)
/// keeps a row only for a later version by the same rule, in SQL (`laterSQL(_:than:)`).
public struct RecordVersion: Sendable, Hashable, Comparable {
    public var wall: Int64
    public var counter: Int64
    public var origin: String

    public init(wall: Int64, counter: Int64, origin: String) {
        self.wall = wall
        self.counter = counter
        self.origin = origin
    }

    /// The version of `record`.
    public init(_ record: WireRecord) {
        self.init(wall: record.wall, counter: record.counter, origin: record.origin)
    }

    /// The version `stamp` names.
    public init(_ stamp: WireStamp) {
        self.init(wall: stamp.wall, counter: stamp.counter, origin: stamp.origin)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.wall != rhs.wall { return lhs.wall < rhs.wall }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.origin.utf8.lexicographicallyPrecedes(rhs.origin.utf8)
    }

    /// The rule in SQL: whether the row `candidate` (a table alias) is later than the row
    /// `stored`. Fixed identifiers only, never input.
    static func laterSQL(_ candidate: String, than stored: String) -> String {
        "(\(candidate).clock_wall, \(candidate).clock_counter, \(candidate).clock_origin) "
            + "> (\(stored).clock_wall, \(stored).clock_counter, \(stored).clock_origin)"
    }
}
