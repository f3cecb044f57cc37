import Defaults
import Foundation
import Testing

/// `Defaults.AnySerializable` as Defaults' users use it: every integer width through `set`/`get`,
/// values hashed and compared by what is stored, sets of them as keys.
@Suite("AnySerializable")
struct AnySerializableTests {
    /// A value, named, and whether an `AnySerializable` reads back as it.
    typealias IntegerCase = (
        name: String, value: Defaults.AnySerializable, readsBack: @Sendable (Defaults.AnySerializable) -> Bool
    )

    /// One extreme value of each integer width, with how to read it back.
    static let integerCases: [IntegerCase] = [
        ("Int8.min", .init(Int8.min), { $0.get(Int8.self) == .min }),
        ("Int8.max", .init(Int8.max), { $0.get(Int8.self) == .max }),
        ("Int16.min", .init(Int16.min), { $0.get(Int16.self) == .min }),
        ("Int16.max", .init(Int16.max), { $0.get(Int16.self) == .max }),
        ("Int32.min", .init(Int32.min), { $0.get(Int32.self) == .min }),
        ("Int32.max", .init(Int32.max), { $0.get(Int32.self) == .max }),
        ("Int64.min", .init(Int64.min), { $0.get(Int64.self) == .min }),
        ("Int64.max", .init(Int64.max), { $0.get(Int64.self) == .max }),
        ("Int.min", .init(Int.min), { $0.get(Int.self) == .min }),
        ("Int.max", .init(Int.max), { $0.get(Int.self) == .max }),
        ("UInt8.max", .init(UInt8.max), { $0.get(UInt8.self) == .max }),
        ("UInt16.max", .init(UInt16.max), { $0.get(UInt16.self) == .max }),
        ("UInt32.max", .init(UInt32.max), { $0.get(UInt32.self) == .max }),
        ("UInt64.max", .init(UInt64.max), { $0.get(UInt64.self) == .max }),
        ("UInt.max", .init(UInt.max), { $0.get(UInt.self) == .max }),
        ("UInt.min", .init(UInt.min), { $0.get(UInt.self) == .min }),
    ]

    @Test(arguments: SuiteKind.withFileSuite)
    func everyIntegerWidthRoundTripsThroughTheSuite(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Defaults.AnySerializable>("any", default: 0, suite: suite)
        for (name, value, readsBack) in Self.integerCases {
            Defaults[key] = value
            #expect(readsBack(Defaults[key]), "\(name)")
            #expect(Defaults[key] == value, "\(name)")
        }
    }

    @Test func setAndGetInPlaceForEveryWidth() {
        var any: Defaults.AnySerializable = nil
        any.set(Int8(-8))
        #expect(any.get() == Int8(-8))
        any.set(Int16(-16), type: Int16.self)
        #expect(any.get(Int16.self) == -16)
        any.set(Int32(-32))
        #expect(any.get() == Int32(-32))
        any.set(Int64(-64))
        #expect(any.get() == Int64(-64))
        any.set(UInt8(8))
        #expect(any.get() == UInt8(8))
        any.set(UInt16(16))
        #expect(any.get() == UInt16(16))
        any.set(UInt32(32))
        #expect(any.get() == UInt32(32))
        any.set(UInt64(64), type: UInt64.self)
        #expect(any.get() == UInt64(64))
        any.set(12.5, type: Float.self)
        #expect(any.get(Float.self) == 12.5)
    }

    @Test func aValueOutOfRangeOfTheAskedWidthReadsAsNil() {
        let large = Defaults.AnySerializable(Int64.max)
        #expect(large.get(Int8.self) == nil)
        #expect(large.get(UInt32.self) == nil)
        #expect(large.get(Int64.self) == .max)
        let negative = Defaults.AnySerializable(Int8.min)
        #expect(negative.get(UInt8.self) == nil)
        #expect(negative.get(UInt64.self) == nil)
        #expect(Defaults.AnySerializable(UInt64.max).get(Int64.self) == nil)
        #expect(Defaults.AnySerializable("12").get(Int8.self) == 12)
        #expect(Defaults.AnySerializable("twelve").get(Int8.self) == nil)
    }

    @Test func equalStoredFormsAreEqualAndHashAlike() {
        // Every width stores an integer: equal numbers are equal values, whatever the width.
        #expect(Defaults.AnySerializable(Int8(7)) == Defaults.AnySerializable(7))
        #expect(Defaults.AnySerializable(UInt64(7)).hashValue == Defaults.AnySerializable(7).hashValue)
        #expect(Defaults.AnySerializable(7) != Defaults.AnySerializable("7"))
        #expect(Defaults.AnySerializable(1) != Defaults.AnySerializable(true))
        let set: Set<Defaults.AnySerializable> = [1, 1.5, "one", true, nil, [1, 2], ["a": 1], .init(Int8(1))]
        #expect(set.count == 7)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func aSetKeyIsStoredAsAnArrayAndKeepsItsElements(kind: SuiteKind) throws {
        let suite = kind.make()
        let key = Defaults.Key<Set<Defaults.AnySerializable>>("anySet", default: [123], suite: suite)
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000)
        Defaults[key].insert(12_131.4)
        Defaults[key].insert(.init(date))
        Defaults[key].insert(.init(UInt64.max))
        Defaults[key].insert(123)
        #expect(Defaults[key] == [123, 12_131.4, .init(date), .init(UInt64.max)])
        let stored = try #require(suite.object(forKey: "anySet") as? [Any])
        #expect(stored.count == 4)
        #expect(stored.contains { $0 as? Int == 123 })
        #expect(stored.contains { $0 as? UInt64 == UInt64.max })
        Defaults[key].remove(123)
        #expect(!Defaults[key].contains(123))
        #expect(Defaults[key].count == 3)
    }

    @Test(arguments: SuiteKind.allCases)
    func aSetKeyOverAStoredValueThatIsNotAnArrayReadsItsDefault(kind: SuiteKind) {
        let suite = kind.make()
        suite.set("not a set", forKey: "anySet")
        let key = Defaults.Key<Set<Defaults.AnySerializable>>("anySet", default: [1], suite: suite)
        #expect(Defaults[key] == [1])
        #expect(suite.object(forKey: "anySet") as? String == "not a set")
    }
}
