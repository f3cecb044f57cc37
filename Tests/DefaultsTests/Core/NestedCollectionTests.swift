import Defaults
import Foundation
import Testing

@Suite("Nested collections")
struct NestedCollectionTests {
    struct Item: Codable, Hashable, Defaults.Serializable {
        var name: String
    }

    @Test(arguments: SuiteKind.allCases)
    func deeplyNested(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<[[String: Set<[String: Int]>]]>("nested", default: [], suite: suite)
        let value: [[String: Set<[String: Int]>]] = [["a": [["x": 1], ["y": 2]]], ["b": []]]
        Defaults[key] = value
        #expect(Defaults[key] == value)
    }

    @Test(arguments: SuiteKind.allCases)
    func collectionsOfEveryKind(kind: SuiteKind) {
        let suite = kind.make()
        let dates = Defaults.Key<[String: [Date]]>("dates", default: [:], suite: suite)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        Defaults[dates] = ["x": [now, now.addingTimeInterval(1)]]
        #expect(Defaults[dates]["x"]?.last == now.addingTimeInterval(1))

        let items = Defaults.Key<[String: [Item]]>("items", default: [:], suite: suite)
        Defaults[items]["list", default: []].append(Item(name: "one"))
        #expect(Defaults[items] == ["list": [Item(name: "one")]])

        let ranges = Defaults.Key<[ClosedRange<Int>]>("ranges", default: [], suite: suite)
        Defaults[ranges] = [1...2, 5...9]
        #expect(Defaults[ranges] == [1...2, 5...9])

        let optionals = Defaults.Key<[String: Int]?>("optionals", suite: suite)
        Defaults[optionals] = ["a": 1]
        #expect(Defaults[optionals] == ["a": 1])
        Defaults[optionals] = nil
        #expect(Defaults[optionals] == nil)
        #expect(suite.object(forKey: "optionals") == nil)
    }

    @Test(arguments: SuiteKind.allCases)
    func storedAsPlainPropertyLists(kind: SuiteKind) throws {
        let suite = kind.make()
        let key = Defaults.Key<[String: [Int]]>("plain", default: [:], suite: suite)
        Defaults[key] = ["a": [1, 2]]
        let stored = try #require(suite.object(forKey: "plain") as? [String: Any])
        #expect(stored["a"] as? [Int] == [1, 2])
    }
}
