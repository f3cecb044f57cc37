/// A record's version as the wire and the tables carry it, and the one rule of which of two
/// versions of a key is later: the later wall time, then the larger counter, then the origin in
/// the byte order of its UTF-8 (as PostgreSQL's `"C"` collation compares the `clock_origin`
/// column).
///
/// Every order of versions goes through this one: the engine's `SyncTimestamp`, the SQL layer's
/// `RecordVersion` and the hybrid logical clock. The upsert states the same rule in SQL
/// (`RecordVersion.replacesSQL`), and a test pins that the two agree.
public struct WireVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970, as the writing machine's clock (or a newer clock it had seen) read.
    public var wall: Int64
    /// Orders changes within the same millisecond, and changes made after seeing a newer clock.
    public var counter: Int64
    /// Who made the change.
    public var origin: String

    /// Creates a version.
    public init(wall: Int64, counter: Int64, origin: String) {
        self.wall = wall
        self.counter = counter
        self.origin = origin
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.wall != rhs.wall { return lhs.wall < rhs.wall }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.origin.utf8.lexicographicallyPrecedes(rhs.origin.utf8)
    }

    /// Equal only byte for byte, as the order and PostgreSQL see origins: `String`'s `==` calls
    /// a composed `"é"` and `"e\u{301}"` equal, which the order puts apart.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.wall == rhs.wall && lhs.counter == rhs.counter && lhs.origin.utf8.elementsEqual(rhs.origin.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(wall)
        hasher.combine(counter)
        hasher.combine(origin.utf8.count)
        for byte in origin.utf8 { hasher.combine(byte) }
    }

    /// How far ahead of a receiving machine's clock a version may be, in milliseconds: a day.
    /// Clocks disagree by seconds or minutes; a version further ahead, from a broken clock or a
    /// hostile writer, would win every later change of its key, and a clock that took it in would
    /// stamp every change after it near the end of time.
    public static let maximumLead: Int64 = 86_400_000

    /// Whether this version is further ahead of the wall clock `now` (milliseconds since 1970)
    /// than ``maximumLead``.
    public func isTooFarAhead(of now: Int64) -> Bool {
        now <= Int64.max - Self.maximumLead && wall > now + Self.maximumLead
    }

    /// Whether a store keeps this version in place of `stored`, its clock reading `now`: when it is
    /// later, or when `stored` is itself further ahead of the clock than ``maximumLead`` (stored
    /// before such versions were refused, or by a writer with the database's own access), which
    /// would otherwise keep every later change of its key out, unseen.
    public func replaces(_ stored: WireVersion, now: Int64) -> Bool {
        stored < self || stored.isTooFarAhead(of: now)
    }

    /// `wall.counter.origin`.
    public var description: String { "\(wall).\(counter).\(origin)" }
}

extension WireRecord {
    /// The record's version.
    public var version: WireVersion { WireVersion(wall: wall, counter: counter, origin: origin) }
}

extension WireStamp {
    /// The version the stamp names.
    public var version: WireVersion { WireVersion(wall: wall, counter: counter, origin: origin) }
}
