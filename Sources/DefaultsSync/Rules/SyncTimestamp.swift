package import DefaultsSyncProtocol
import Foundation

/// The version of a synced value: a hybrid logical clock reading.
///
/// Timestamps order by wall time, then counter, then origin in byte order, so that every machine
/// agrees on which of two changes is the newer one (the last writer wins), even when their clocks
/// disagree. Two timestamps are equal only when their origins are equal byte for byte.
public struct SyncTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970, as the writing machine's clock (or a newer clock it had seen) read.
    public var wallTime: Int64
    /// Orders changes within the same millisecond, and changes made after seeing a newer clock.
    public var counter: Int64
    /// Who made the change: an ASCII identifier unique to one syncing process.
    public var origin: String

    /// Creates a timestamp.
    public init(wallTime: Int64, counter: Int64, origin: String) {
        self.wallTime = wallTime
        self.counter = counter
        self.origin = origin
    }

    /// Parses the ``description`` form, `wallTime.counter.origin`; `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let wallTime = Int64(parts[0]), let counter = Int64(parts[1]), counter >= 0 else {
            return nil
        }
        self.init(wallTime: wallTime, counter: counter, origin: String(parts[2]))
    }

    /// `wallTime.counter.origin`, as ``init(_:)`` reads it.
    public var description: String { "\(wallTime).\(counter).\(origin)" }

    // The order, and equality with it, are `WireVersion`'s: the one rule the SQL layer and the
    // service share.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.version < rhs.version }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.version == rhs.version }

    /// The same version as the wire carries it.
    package var version: WireVersion { WireVersion(wall: wallTime, counter: counter, origin: origin) }

    /// Whether a store keeps this version in place of `stored`, its clock reading `now`
    /// (milliseconds since 1970): `WireVersion.replaces(_:now:)`, the stores' one rule.
    package func replaces(_ stored: SyncTimestamp, now: Int64) -> Bool {
        version.replaces(stored.version, now: now)
    }

    /// The timestamp of `version`.
    package init(_ version: WireVersion) {
        self.init(wallTime: version.wall, counter: version.counter, origin: version.origin)
    }

    /// The earliest version by `origin` after this one (the next counter, else the next
    /// millisecond), or `nil` past the largest there is, which only a hostile stamp reaches.
    package func successor(origin: String) -> SyncTimestamp? {
        if counter < Int64.max {
            return SyncTimestamp(wallTime: wallTime, counter: counter + 1, origin: origin)
        }
        if wallTime < Int64.max {
            return SyncTimestamp(wallTime: wallTime + 1, counter: 0, origin: origin)
        }
        return nil
    }

    /// The version of a value stored before it was ever synced: older than any change.
    static func unknown(origin: String) -> Self {
        Self(wallTime: 0, counter: 0, origin: origin)
    }
}
