import DefaultsPropertyList
import Foundation
import Testing

@testable import Defaults
@testable import DefaultsSync

/// The digests that tell whether a synced value changed: of the value itself, alike for values
/// equal as property lists, and readable in the form earlier journals recorded.
@Suite struct SyncValueDigestTests {
    @Test func valuesEqualAsPropertyListsHaveOneDigest() {
        let pairs: [(PropertyListValue, PropertyListValue)] = [
            (.unsignedInteger(7), .integer(7)),
            (.real(.nan), .real(-.nan)),
            (.real(-0.0), .real(0.0)),
            (.date(Date(timeIntervalSinceReferenceDate: .nan)), .date(Date(timeIntervalSinceReferenceDate: -.nan))),
            (.dictionary(["a": .integer(1), "b": .string("x")]), .dictionary(["b": .string("x"), "a": .integer(1)])),
        ]
        for (a, b) in pairs {
            #expect(a == b)
            #expect(SyncValue.digest(of: a) == SyncValue.digest(of: b), "\(a) \(b)")
        }
    }

    @Test func valuesOfDifferentKindsOrContentsDiffer() {
        let values: [PropertyListValue?] = [
            nil, .integer(1), .real(1), .boolean(true), .string("1"), .data(Data([1])), .array([.integer(1)]),
            .dictionary(["1": .integer(1)]), .date(Date(timeIntervalSinceReferenceDate: 1)),
            .unsignedInteger(.max), .integer(-1), .string(""), .array([]), .dictionary([:]),
            .array([.string("ab"), .string("c")]), .array([.string("a"), .string("bc")]),
            .dictionary(["a": .string("b")]), .dictionary(["ab": .string("")]),
        ]
        let digests = values.map(SyncValue.digest(of:))
        #expect(Set(digests).count == values.count, "\(digests)")
        #expect(SyncValue.digest(of: nil) == SyncValue.absentDigest)
    }

    @Test func aDateReadBackFromASuitesFileHasTheDigestOfTheDateWritten() throws {
        // A text property list keeps whole seconds: the value read back is another `Date`, and
        // must not look like a change of the value written.
        let written = PropertyListValue.dictionary(["at": .date(Date(timeIntervalSinceReferenceDate: 1_000.75))])
        let readBack = try PropertyList.decodeValue(PropertyList.encodeXML(written))
        #expect(readBack != written)
        #expect(SyncValue.digest(of: readBack) == SyncValue.digest(of: written))
        #expect(
            SyncValue.digest(of: .date(Date(timeIntervalSinceReferenceDate: 1_001)))
                != SyncValue.digest(of: .date(Date(timeIntervalSinceReferenceDate: 1_000))))
    }

    @Test func aDigestAnEarlierVersionRecordedIsComparedInItsOwnForm() throws {
        let value = PropertyListValue.dictionary(["theme": .string("dark"), "size": .integer(12)])
        // An earlier version recorded FNV-1a (64 bits, hex) of the value's XML encoding.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in try PropertyList.encodeXML(value) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let recorded = String(hash, radix: 16)
        #expect(SyncValue.digest(of: value, likeRecorded: recorded) == recorded)
        #expect(SyncValue.digest(of: .string("light"), likeRecorded: recorded) != recorded)
        // Digests of this version, and no value, need no encoding.
        let current = SyncValue.digest(of: value)
        #expect(SyncValue.digest(of: value, likeRecorded: current) == current)
        #expect(SyncValue.digest(of: value, likeRecorded: nil) == current)
        #expect(SyncValue.digest(of: nil, likeRecorded: recorded) == SyncValue.absentDigest)
    }
}
