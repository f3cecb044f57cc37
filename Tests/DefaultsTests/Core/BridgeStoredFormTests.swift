import Defaults
import Foundation
import Testing

// Custom bridges as Defaults' users write them, whose `Serializable` is not a property-list type
// but another serializable type: Defaults stores that as its own bridge stores it, and so must
// this library, so that the stored form reads back through `suite.object(forKey:)` the same.

private struct ClockTime: Hashable, Codable, Defaults.Serializable {
    var hour: Int
    var minute: Int
}

/// A bridge whose stored form is built from `Codable` parts: stored as an array of JSON strings.
private struct OpeningHours: Hashable {
    var opens: ClockTime
    var closes: ClockTime
}

extension OpeningHours: Defaults.Serializable {
    struct Bridge: Defaults.Bridge {
        typealias Value = OpeningHours
        typealias Serializable = [ClockTime]

        func serialize(_ value: OpeningHours?) -> [ClockTime]? {
            value.map { [$0.opens, $0.closes] }
        }

        func deserialize(_ object: [ClockTime]?) -> OpeningHours? {
            guard let object, object.count == 2 else { return nil }
            return OpeningHours(opens: object[0], closes: object[1])
        }
    }

    static let bridge = Bridge()
}

/// A bridge whose stored form is a number type that is not stored as itself (`UInt8`, stored as
/// an integer).
private struct Percent: Hashable, Defaults.Serializable {
    var value: UInt8

    struct Bridge: Defaults.Bridge {
        typealias Value = Percent
        typealias Serializable = UInt8
        func serialize(_ value: Percent?) -> UInt8? { value?.value }
        func deserialize(_ object: UInt8?) -> Percent? { object.flatMap { $0 <= 100 ? Percent(value: $0) : nil } }
    }

    static let bridge = Bridge()
}

/// A custom-bridged `Hashable` element, stored as a string dictionary.
private struct Fruit: Hashable, Defaults.Serializable {
    let name: String
    let count: UInt

    struct Bridge: Defaults.Bridge {
        typealias Value = Fruit
        typealias Serializable = [String: String]

        func serialize(_ value: Fruit?) -> [String: String]? {
            value.map { ["name": $0.name, "count": String($0.count)] }
        }

        func deserialize(_ object: [String: String]?) -> Fruit? {
            guard let object, let name = object["name"], let count = object["count"].flatMap(UInt.init) else {
                return nil
            }
            return Fruit(name: name, count: count)
        }
    }

    static let bridge = Bridge()
}

private let morning = OpeningHours(opens: ClockTime(hour: 8, minute: 0), closes: ClockTime(hour: 12, minute: 30))
private let evening = OpeningHours(opens: ClockTime(hour: 17, minute: 5), closes: ClockTime(hour: 23, minute: 59))

@Suite("Bridges whose stored form is another serializable type")
struct BridgeStoredFormTests {
    @Test(arguments: SuiteKind.withFileSuite)
    func partsAreStoredAsTheirOwnBridgesStoreThem(kind: SuiteKind) throws {
        let suite = kind.make()
        let key = Defaults.Key<OpeningHours>("hours", default: morning, suite: suite)
        #expect(Defaults[key] == morning)
        #expect(suite.object(forKey: "hours") as? [String] == [#"{"hour":8,"minute":0}"#, #"{"hour":12,"minute":30}"#])
        Defaults[key] = evening
        #expect(Defaults[key] == evening)
        #expect(
            suite.array(forKey: "hours") as? [String] == [#"{"hour":17,"minute":5}"#, #"{"hour":23,"minute":59}"#])
        // What Defaults wrote reads back.
        suite.set([#"{"hour":9,"minute":15}"#, #"{"hour":10,"minute":0}"#], forKey: "hours")
        #expect(
            Defaults[key] == OpeningHours(opens: ClockTime(hour: 9, minute: 15), closes: ClockTime(hour: 10, minute: 0))
        )
    }

    @Test(arguments: SuiteKind.allCases)
    func optionalsCollectionsAndAnySerializableStoreTheSameParts(kind: SuiteKind) {
        let suite = kind.make()
        let optional = Defaults.Key<OpeningHours?>("optionalHours", suite: suite)
        #expect(Defaults[optional] == nil)
        Defaults[optional] = evening
        #expect(Defaults[optional] == evening)
        #expect(
            suite.object(forKey: "optionalHours") as? [String] == [
                #"{"hour":17,"minute":5}"#, #"{"hour":23,"minute":59}"#,
            ])
        Defaults[optional] = nil
        #expect(suite.object(forKey: "optionalHours") == nil)

        let week = Defaults.Key<[String: [OpeningHours]]>("week", default: [:], suite: suite)
        Defaults[week]["monday"] = [morning, evening]
        #expect(Defaults[week] == ["monday": [morning, evening]])
        let stored = suite.dictionary(forKey: "week")?["monday"] as? [[String]]
        #expect(stored?.first == [#"{"hour":8,"minute":0}"#, #"{"hour":12,"minute":30}"#])

        var any = Defaults.AnySerializable(morning)
        #expect(any.get(OpeningHours.self) == morning)
        any.set(evening)
        #expect(any.get() == evening)
    }

    @Test(arguments: SuiteKind.allCases)
    func aDamagedPartReadsTheDefaultAndKeepsWhatIsStored(kind: SuiteKind) {
        let suite = kind.make()
        let damaged: [Any] = [#"{"hour":8,"minute":0}"#, "not JSON"]
        suite.set(damaged, forKey: "hours")
        let key = Defaults.Key<OpeningHours>("hours", default: morning, suite: suite)
        #expect(Defaults[key] == morning)
        #expect(suite.object(forKey: "hours") as? [String] == [#"{"hour":8,"minute":0}"#, "not JSON"])
        suite.set([#"{"hour":8,"minute":0}"#], forKey: "hours")
        #expect(Defaults[key] == morning)
        suite.set(42, forKey: "hours")
        #expect(Defaults[key] == morning)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func aNumberTypeThatIsNotStoredAsItselfIsStoredAsAnInteger(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Percent>("percent", default: Percent(value: 50), suite: suite)
        Defaults[key] = Percent(value: 75)
        #expect(Defaults[key] == Percent(value: 75))
        #expect(suite.object(forKey: "percent") as? Int == 75)
        suite.set(300, forKey: "percent")
        #expect(Defaults[key] == Percent(value: 50))
        suite.set(101, forKey: "percent")
        #expect(Defaults[key] == Percent(value: 50))
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func aSetOfACustomBridgedTypeInsertsAndStoresItsElements(kind: SuiteKind) throws {
        let suite = kind.make()
        let apple = Fruit(name: "Apple", count: 10)
        let banana = Fruit(name: "Banana", count: 20)
        let key = Defaults.Key<Set<Fruit>>("fruits", default: [apple], suite: suite)
        Defaults[key].insert(apple)
        #expect(Defaults[key] == [apple])
        Defaults[key].insert(banana)
        #expect(Defaults[key] == [apple, banana])
        let stored = try #require(suite.object(forKey: "fruits") as? [[String: String]])
        #expect(Set(stored.compactMap { $0["name"] }) == ["Apple", "Banana"])

        let nested = Defaults.Key<[Set<Fruit>]>("fruitBaskets", default: [[apple]], suite: suite)
        Defaults[nested][0].insert(banana)
        Defaults[nested].append([banana])
        #expect(Defaults[nested] == [[apple, banana], [banana]])

        // An element that does not decode makes the whole set unreadable: the default, and what
        // is stored is kept.
        suite.set([["name": "Cherry", "count": "many"]], forKey: "fruits")
        #expect(Defaults[key] == [apple])
        #expect((suite.object(forKey: "fruits") as? [[String: String]])?.first?["count"] == "many")
    }
}
