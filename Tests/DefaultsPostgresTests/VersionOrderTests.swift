import Defaults
import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Testing

/// The one order of sync versions (`WireVersion`), as every path takes it: the engine's
/// `SyncTimestamp`, the SQL layer's `RecordVersion` and the hybrid logical clock; the upsert's SQL
/// (`SyncSchemaTests`) is held to the same table. Here, where all three modules meet.
@Suite("The order of sync versions")
struct VersionOrderTests {
    /// Two versions and how the first compares with the second, written out rather than computed.
    struct Pair: Sendable, CustomStringConvertible {
        enum Order: Sendable { case before, same, after }

        let first: WireVersion
        let order: Order
        let second: WireVersion

        init(_ first: (Int64, Int64, String), _ order: Order, _ second: (Int64, Int64, String)) {
            self.first = WireVersion(wall: first.0, counter: first.1, origin: first.2)
            self.order = order
            self.second = WireVersion(wall: second.0, counter: second.1, origin: second.2)
        }

        /// The order of `second` to `first`.
        var reversed: Order {
            switch order {
            case .before: .after
            case .same: .same
            case .after: .before
            }
        }

        var description: String { "\(Self.show(first)) \(order) \(Self.show(second))" }

        /// Non-ASCII origins by their scalars, so that composed and decomposed forms differ.
        static func show(_ version: WireVersion) -> String {
            let origin = version.origin.unicodeScalars.map {
                $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}"
            }
            return "\(version.wall).\(version.counter).\"\(origin.joined())\""
        }
    }

    static let pairs: [Pair] = [
        // The wall time first, whatever the counter and origin.
        Pair((1, 9, "z"), .before, (2, 0, "a")),
        Pair((-1, 0, "a"), .before, (0, 0, "a")),
        Pair((5, .max, "a"), .before, (6, 0, "a")),
        // Then the counter, whatever the origin.
        Pair((2, 0, "z"), .before, (2, 1, "a")),
        // Then the origin's bytes: upper case before lower, a prefix before what it begins.
        Pair((2, 1, "Z"), .before, (2, 1, "a")),
        Pair((2, 1, "A"), .before, (2, 1, "a")),
        Pair((2, 1, ""), .before, (2, 1, "a")),
        Pair((2, 1, "ab"), .before, (2, 1, "abc")),
        // Non-ASCII: a UTF-8 lead byte is above every ASCII byte, and 4-byte forms above 3-byte.
        Pair((2, 1, "z"), .before, (2, 1, "\u{E9}")),
        Pair((2, 1, "\u{E9}"), .before, (2, 1, "\u{1F600}")),
        Pair((2, 1, "\u{FFFD}"), .before, (2, 1, "\u{1F600}")),
        // Bytes, not `String`'s order, which reads "e\u{301}" as "é", after "f".
        Pair((2, 1, "e\u{301}"), .before, (2, 1, "f")),
        // Bytes, not `String`'s equality: composed and decomposed "é" are two origins.
        Pair((2, 1, "e\u{301}"), .before, (2, 1, "\u{E9}")),
        Pair((2, 1, "a"), .same, (2, 1, "a")),
        Pair((7, 3, "\u{E9}"), .same, (7, 3, "\u{E9}")),
        Pair((3, 0, "b"), .after, (2, 5, "c")),
    ]

    /// `a` compares with `b` as `order` says, every way a `Comparable` and `Hashable` type can.
    func expect<Version: Comparable & Hashable>(
        _ a: Version, _ order: Pair.Order, _ b: Version, _ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect((a < b) == (order == .before), "\(Version.self): \(pair)", sourceLocation: sourceLocation)
        #expect((a == b) == (order == .same), "\(Version.self): \(pair)", sourceLocation: sourceLocation)
        #expect((a > b) == (order == .after), "\(Version.self): \(pair)", sourceLocation: sourceLocation)
        #expect(
            Set([a, b]).count == (order == .same ? 1 : 2), "\(Version.self): \(pair)", sourceLocation: sourceLocation)
    }

    @Test(arguments: pairs)
    func everyTypeOrdersThePairAlike(pair: Pair) {
        let orders = [(pair.first, pair.order, pair.second), (pair.second, pair.reversed, pair.first)]
        for (first, order, second) in orders {
            expect(first, order, second, pair)
            expect(SyncTimestamp(first), order, SyncTimestamp(second), pair)
            expect(
                RecordVersion(wall: first.wall, counter: first.counter, origin: first.origin), order,
                RecordVersion(wall: second.wall, counter: second.counter, origin: second.origin), pair)
        }
    }

    @Test(arguments: pairs)
    func theClockStampsAfterBothWhicheverItReceivesFirst(pair: Pair) {
        let received = [SyncTimestamp(pair.first), SyncTimestamp(pair.second)]
        for stamps in [received, received.reversed()] {
            // At the epoch: behind every pair's later wall time, or at it.
            let clock = HybridLogicalClock(origin: "m", wallClock: { Date(timeIntervalSince1970: 0) })
            stamps.forEach(clock.receive)
            let next = clock.now()
            #expect(next > stamps[0] && next > stamps[1], "\(pair): \(next)")
            #expect(next.wallTime == max(pair.first.wall, pair.second.wall), "\(pair): \(next)")
            #expect(clock.now() > next)
        }
    }

    /// A version more than a day ahead of the receiving clock is refused by the stores' one
    /// rule (`RecordRefusal`, which the service asks with its clock), up to the largest there is.
    @Test func aVersionFurtherAheadThanADayIsRefused() {
        let now: Int64 = 1_800_000_000_000
        let day = WireVersion.maximumLead
        let record = { (wall: Int64) in WireRecord(key: "k", value: nil, wall: wall, counter: 0, origin: "o") }
        for wall in [now - 10 * day, now, now + day] {
            #expect(!record(wall).version.isTooFarAhead(of: now))
            #expect(RecordRefusal.reason(for: record(wall), now: now) == nil)
        }
        for wall in [now + day + 1, .max] {
            #expect(record(wall).version.isTooFarAhead(of: now))
            let reason = RecordRefusal.reason(for: record(wall), now: now)
            #expect(reason?.contains("ahead of the clock") == true, "\(reason ?? "nil")")
            #expect(RecordRefusal.reason(for: record(wall)) == nil, "without a clock, no judgement of time")
        }
        #expect(!record(.max).version.isTooFarAhead(of: .max), "a clock at the end of time judges nothing ahead")
    }

    @Test func theBytesCasesAreOnesStringOrdersOtherwise() {
        // Else the table's cases for bytes would pass under `String`'s own order too.
        #expect("e\u{301}" > "f")
        #expect("e\u{301}" == "\u{E9}")
    }

    @Test func aRecordAndItsWireFormAreEachOther() {
        let records = [
            SyncRecord(
                key: "k", value: Data("v".utf8), timestamp: SyncTimestamp(wallTime: 7, counter: 3, origin: "e\u{301}")),
            SyncRecord(key: "removed", value: nil, timestamp: SyncTimestamp(wallTime: -2, counter: 0, origin: "")),
        ]
        for record in records {
            let wire = WireRecord(record)
            #expect(wire.key == record.key && wire.value == record.value && wire.seq == nil)
            #expect(wire.version == record.timestamp.version)
            #expect(Array(wire.origin.utf8) == Array(record.timestamp.origin.utf8))
            #expect(SyncRecord(wire) == record)
        }
        let numbered = WireRecord(key: "k", value: nil, wall: 1, counter: 2, origin: "o", seq: 40)
        #expect(
            SyncRecord(numbered)
                == SyncRecord(key: "k", value: nil, timestamp: .init(wallTime: 1, counter: 2, origin: "o")))
        let stamp = WireStamp(key: "k", wall: 1, counter: 2, origin: "o")
        #expect(SyncTimestamp(stamp) == SyncTimestamp(wallTime: 1, counter: 2, origin: "o"))
    }
}
