import DefaultsSyncProtocol

/// A record's version, ordered by the one rule of which of two versions of a key wins
/// (`WireVersion`'s): the later wall time, then the larger counter, then the origin in byte order
/// (as PostgreSQL's `"C"` collation compares the `clock_origin` column). The upsert
/// (``SyncRows/store(_:savepoint:on:logger:)``) keeps a row only for a later version by the same
/// rule, in SQL (`replacesSQL(_:stored:)`).
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

    /// The same version as the wire carries it, whose order this one is.
    var version: WireVersion { WireVersion(wall: wall, counter: counter, origin: origin) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.version < rhs.version }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.version == rhs.version }

    /// The rule in SQL: whether the row `candidate` (a table alias) replaces the row `stored`,
    /// by `WireVersion.replaces(_:now:)` with the database's clock. Fixed identifiers and a
    /// constant only, never input.
    ///
    /// The same rule as in Swift, stated again because PostgreSQL decides it inside the upsert: a
    /// row comparison over (`clock_wall`, `clock_counter`, `clock_origin`), the origin's column
    /// `COLLATE "C"` (bytes), or a stored wall time more than `WireVersion.maximumLead` ahead of
    /// `clock_timestamp()`. Change both together: the version-order tests push every pair of their
    /// table through the upsert and hold it to `<`, and a row stored days ahead to its replacement.
    static func replacesSQL(_ candidate: String, stored: String) -> String {
        "((\(candidate).clock_wall, \(candidate).clock_counter, \(candidate).clock_origin) "
            + "> (\(stored).clock_wall, \(stored).clock_counter, \(stored).clock_origin) "
            + "OR \(stored).clock_wall > (extract(epoch FROM clock_timestamp()) * 1000)::bigint + "
            + "\(WireVersion.maximumLead))"
    }
}
