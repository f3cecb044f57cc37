@_spi(Testing) import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// A key keeps the value it read last while its suite's generation is unchanged. These tests
/// show that it never serves a value that a read of the suite would not return.
@Suite("Key read cache", .mayBlock)
struct KeyReadCacheTests {
    /// The suites that number their states, and so let keys cache.
    enum CachingSuiteKind: String, CaseIterable, CustomTestStringConvertible {
        case inMemory
        case file

        var testDescription: String { rawValue }

        func make(in directory: FileSuiteTemporaryDirectory, arguments: [String] = []) -> any DefaultsSuite {
            switch self {
            case .inMemory: InMemorySuite(arguments: arguments)
            case .file: directory.suite("cache-\(UUID().uuidString)", arguments: arguments)
            }
        }
    }

    struct Profile: Codable, Equatable, Defaults.Serializable {
        var name: String
        var age: Int
    }

    @Test(arguments: CachingSuiteKind.allCases)
    func suitesThatCacheGiveAGenerationThatMovesOnEveryChange(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        var seen: Set<UInt64> = []
        func expectNewGeneration() {
            let generation = suite.valueGeneration
            #expect(generation != nil)
            #expect(seen.insert(generation ?? 0).inserted, "the generation did not change")
        }
        expectNewGeneration()
        suite.set(1, forKey: "a")
        expectNewGeneration()
        suite.set(nil, forKey: "a")
        expectNewGeneration()
        suite.setValues([(key: "b", object: 2), (key: "c", object: nil)])
        expectNewGeneration()
        suite.register(defaults: ["d": 4])
        expectNewGeneration()
        suite.removeAll()
        expectNewGeneration()
    }

    @Test func userDefaultsSuitesDoNotCache() {
        #expect(SuiteKind.userDefaults.make().valueGeneration == nil)
    }

    @Test(arguments: CachingSuiteKind.allCases)
    func readsSeeEveryWriteResetAndRemoveAll(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        let key = Defaults.Key<Int>("count", default: 7, suite: suite)
        #expect(Defaults[key] == 7)
        Defaults[key] = 1
        #expect(Defaults[key] == 1)
        #expect(Defaults[key] == 1)
        suite.set(2, forKey: "count")  // behind the key's back
        #expect(Defaults[key] == 2)
        key.reset()
        #expect(Defaults[key] == 7)
        Defaults[key] = 3
        #expect(Defaults[key] == 3)
        Defaults.removeAll(suite: suite)
        #expect(Defaults[key] == 7)
        suite.setValues([(key: "count", object: 4)])
        #expect(Defaults[key] == 4)
    }

    @Test(arguments: CachingSuiteKind.allCases)
    func aNewRegisteredDefaultIsSeen(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        let key = Defaults.Key<String>("greeting", default: "hello", suite: suite)
        #expect(Defaults[key] == "hello")
        suite.register(defaults: ["greeting": "bonjour"])
        #expect(Defaults[key] == "bonjour")
    }

    @Test(arguments: CachingSuiteKind.allCases)
    func codableValuesAreReadAgainAfterAChange(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        let key = Defaults.Key<Profile>("profile", default: Profile(name: "none", age: 0), suite: suite)
        Defaults[key] = Profile(name: "Ada", age: 36)
        #expect(Defaults[key] == Profile(name: "Ada", age: 36))
        Defaults[key].age += 1
        #expect(Defaults[key] == Profile(name: "Ada", age: 37))
        suite.set("not json", forKey: "profile")
        #expect(Defaults[key] == Profile(name: "none", age: 0))
    }

    /// A stored value of the wrong type reads as the default, and a good value after it is seen.
    @Test(arguments: CachingSuiteKind.allCases)
    func aWrongTypeReadsAsTheDefaultAndDoesNotStick(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        let key = Defaults.Key<Int>("level", default: 5, suite: suite)
        suite.set("eleven", forKey: "level")
        #expect(Defaults[key] == 5)
        #expect(Defaults[key] == 5)
        suite.set(11, forKey: "level")
        #expect(Defaults[key] == 11)
        suite.set([1, 2], forKey: "level")
        #expect(Defaults[key] == 5)
        #expect(suite.object(forKey: "level") as? [Int] == [1, 2], "the stored value is left alone")
    }

    @Test(arguments: CachingSuiteKind.allCases)
    func aDynamicDefaultIsComputedOnEveryRead(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        let counter = Atomic<Int>(0)
        let key = Defaults.Key<Int>("ticket", suite: suite) { counter.add(1, ordering: .relaxed).newValue }
        #expect(Defaults[key] == 1)
        #expect(Defaults[key] == 2)
        Defaults[key] = 40
        #expect(Defaults[key] == 40)
        #expect(Defaults[key] == 40)
        key.reset()
        #expect(Defaults[key] == 3)
    }

    /// A launch argument wins over every write, and the key keeps reading it.
    @Test(arguments: CachingSuiteKind.allCases)
    func launchArgumentOverridesStayInForce(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory, arguments: ["-speed", "9"])
        let key = Defaults.Key<Int>("speed", default: 1, suite: suite)
        #expect(Defaults[key] == 9)
        Defaults[key] = 2
        #expect(Defaults[key] == 9)
        #expect(suite.persistentValues()["speed"] as? Int == 2)
        let other = Defaults.Key<Int>("other", default: 1, suite: suite)
        Defaults[other] = 2
        #expect(Defaults[other] == 2)
    }

    /// A key read through another suite gets that suite's value, and its own suite's again after.
    @Test(arguments: CachingSuiteKind.allCases)
    func aKeyReadThroughTwoSuitesKeepsThemApart(kind: CachingSuiteKind) throws {
        let directory = try FileSuiteTemporaryDirectory()
        let first = kind.make(in: directory)
        let second = kind.make(in: directory)
        let key = Defaults.Key<String>("place", default: "none", suite: first)
        Defaults[key] = "first"
        second.set("second", forKey: "place")
        #expect(Defaults[key] == "first")
        #expect(second[key] == "second")
        #expect(Defaults[key] == "first")
        #expect(second[key] == "second")
        // Generations never repeat across suites, so neither can pass for the other.
        #expect(first.valueGeneration != second.valueGeneration)
    }

    /// A `UserDefaults` suite changed behind the key's back (by Foundation directly) is read afresh.
    @Test func userDefaultsChangedDirectlyIsSeen() throws {
        let name = "swift-defaults-tests-\(UUID().uuidString)"
        TemporarySuites.remember(name)
        let userDefaults = try #require(UserDefaults(suiteName: name))
        let key = Defaults.Key<Int>("direct", default: 0, suite: userDefaults)
        #expect(Defaults[key] == 0)
        userDefaults.set(12, forKey: "direct")
        #expect(Defaults[key] == 12)
        userDefaults.set(13, forKey: "direct")
        #expect(Defaults[key] == 13)
    }

    /// Another process's write reaches a key that had cached the old value.
    @Test func anotherProcessesWriteIsSeen() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("shared-cache")
        let key = Defaults.Key<String>("color", default: "none", suite: suite)
        Defaults[key] = "red"
        try suite.flush()
        #expect(Defaults[key] == "red")
        let child = try TestHelper.run(["filesuite-set", directory.path, "shared-cache", "color", "blue"])
        #expect(child.status == 0, "\(child.error)")
        try await waitUntil("the other process's value") { Defaults[key] == "blue" }
        #expect(suite.object(forKey: "color") as? String == "blue")
    }

    /// With one writer counting up and readers reading at once, no reader ever sees a value older
    /// than one it has seen, and every reader ends on the last value.
    @Test(arguments: CachingSuiteKind.allCases)
    func concurrentReadersNeverGoBack(kind: CachingSuiteKind) async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = kind.make(in: directory)
        let key = Defaults.Key<Int>("counter", default: 0, suite: suite)
        let other = Defaults.Key<Int>("noise", default: 0, suite: suite)
        let last = 20_000
        let isDone = DoneFlag()
        let wentBack = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for value in 1...last {
                    Defaults[key] = value
                    Defaults[other] = -value  // other keys' writes move the generation too
                }
                isDone.value.store(true, ordering: .releasing)
                return false
            }
            for _ in 0..<3 {
                group.addTask {
                    var seen = 0
                    while !isDone.value.load(ordering: .acquiring) {
                        let value = Defaults[key]
                        if value < seen { return true }
                        seen = value
                    }
                    return Defaults[key] != last
                }
            }
            return await group.reduce(false) { $0 || $1 }
        }
        #expect(!wentBack)
        #expect(Defaults[key] == last)
    }

    final class DoneFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    @Test func referenceTypesAreNotCached() {
        final class Box: NSObject {}
        #expect(ReferenceSemantics.isPossible(in: Box.self))
        #expect(ReferenceSemantics.isPossible(in: Box?.self))
        #expect(ReferenceSemantics.isPossible(in: [String: [Box]].self))
        #expect(!ReferenceSemantics.isPossible(in: Int.self))
        #expect(!ReferenceSemantics.isPossible(in: [String: [Int?]].self))
        #expect(!ReferenceSemantics.isPossible(in: Profile.self))
    }
}
