import Defaults
import Foundation
import Testing

/// What another program stored under a key never crashes a read, and is never destroyed by one.
@Suite("Robust reads")
struct RobustnessTests {
    struct Settings: Codable, Equatable, Defaults.Serializable {
        var volume: Int
    }

    @Test(arguments: SuiteKind.allCases)
    func wrongTypeReadsAsDefaultAndIsKept(kind: SuiteKind) {
        let suite = kind.make()
        suite.set("not a number", forKey: "count")
        suite.set(42, forKey: "title")
        suite.set(["a", "b"], forKey: "flags")
        let count = Defaults.Key<Int>("count", default: 7, suite: suite)
        let title = Defaults.Key<Date?>("title", suite: suite)
        let flags = Defaults.Key<[String: Bool]>("flags", default: ["x": true], suite: suite)
        #expect(Defaults[count] == 7)
        #expect(Defaults[title] == nil)
        #expect(Defaults[flags] == ["x": true])
        #expect(suite.object(forKey: "count") as? String == "not a number")
        #expect(suite.object(forKey: "title") as? Int == 42)
        #expect(suite.object(forKey: "flags") as? [String] == ["a", "b"])
    }

    @Test(arguments: SuiteKind.allCases)
    func undecodableValuesReadAsDefaultAndAreKept(kind: SuiteKind) {
        let suite = kind.make()
        suite.set(#"{"volume": "loud"}"#, forKey: "settings")
        suite.set([1, "two", 3], forKey: "numbers")
        suite.set("not-a-uuid", forKey: "id")
        suite.set([5, 1], forKey: "range")
        suite.set(300, forKey: "small")
        let settings = Defaults.Key<Settings>("settings", default: Settings(volume: 1), suite: suite)
        let numbers = Defaults.Key<[Int]>("numbers", default: [0], suite: suite)
        let id = Defaults.Key<UUID?>("id", suite: suite)
        let range = Defaults.Key<Range<Int>>("range", default: 0..<1, suite: suite)
        let small = Defaults.Key<UInt8>("small", default: 1, suite: suite)
        #expect(Defaults[settings] == Settings(volume: 1))
        #expect(Defaults[numbers] == [0])
        #expect(Defaults[id] == nil)
        #expect(Defaults[range] == 0..<1)
        #expect(Defaults[small] == 1)
        #expect(suite.object(forKey: "settings") as? String == #"{"volume": "loud"}"#)
        #expect(suite.object(forKey: "small") as? Int == 300)
        // Writing the key replaces the bad value, as the user asked.
        Defaults[settings] = Settings(volume: 2)
        #expect(Defaults[settings] == Settings(volume: 2))
    }

    @Test(arguments: SuiteKind.allCases)
    func lenientNumbersAsFoundationReadsThem(kind: SuiteKind) {
        let suite = kind.make()
        suite.set("5", forKey: "fromArgument")
        suite.set(3, forKey: "integerForDouble")
        suite.set("YES", forKey: "flag")
        suite.set(2.0, forKey: "integralDouble")
        #expect(Defaults[Defaults.Key<Int>("fromArgument", default: 0, suite: suite)] == 5)
        #expect(Defaults[Defaults.Key<Double>("integerForDouble", default: 0, suite: suite)] == 3)
        #expect(Defaults[Defaults.Key<Bool>("flag", default: false, suite: suite)])
        #expect(Defaults[Defaults.Key<Int>("integralDouble", default: 0, suite: suite)] == 2)
    }

    @Test(arguments: SuiteKind.allCases)
    func unserializableWriteLeavesStoredValue(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<[Int?]>("holes", default: [], suite: suite)
        Defaults[key] = [1, 2]
        Defaults[key] = [1, nil]  // a property list cannot hold nil: reported, nothing lost
        #expect(Defaults[key] == [1, 2])
    }

    @Test func codableCacheSeesChangedStoredValue() {
        let suite = InMemorySuite()
        let key = Defaults.Key<Settings>("settings", default: Settings(volume: 0), suite: suite)
        Defaults[key] = Settings(volume: 1)
        #expect(Defaults[key] == Settings(volume: 1))
        suite.set(#"{"volume":2}"#, forKey: "settings")
        #expect(Defaults[key] == Settings(volume: 2))
        suite.set(nil, forKey: "settings")
        #expect(Defaults[key] == Settings(volume: 0))
    }
}
