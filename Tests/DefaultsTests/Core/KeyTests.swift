import Defaults
import Foundation
import Synchronization
import Testing

// Key names are unique per test: Foundation's registration domain is shared by every
// UserDefaults object of a process.
@Suite("Keys")
struct KeyTests {
    @Test(arguments: SuiteKind.allCases)
    func optionalKeyDefaultsToNil(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Double?>("name_optionalKeyD", suite: suite)
        #expect(Defaults[key] == nil)
        Defaults[key] = 1.5
        #expect(Defaults[key] == 1.5)
        key.reset()
        #expect(Defaults[key] == nil)
    }

    @Test(arguments: SuiteKind.allCases)
    func dynamicDefaultIsEvaluatedOnEachReadAndNotRegistered(kind: SuiteKind) {
        let suite = kind.make()
        let counter = Counter()
        let key = Defaults.Key<Int>("dynamic_dynamicDefau", suite: suite) { counter.next() }
        #expect(key.isDefaultValueDynamic)
        #expect(Defaults[key] == 1)
        #expect(Defaults[key] == 2)
        #expect(suite.object(forKey: "dynamic_dynamicDefau") == nil)
        Defaults[key] = 10
        #expect(Defaults[key] == 10)
        #expect(counter.value == 2)
    }

    @Test(arguments: SuiteKind.allCases)
    func staticDefaultIsRegistered(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Bool>("registered_staticDefaul", default: true, suite: suite)
        #expect(!key.isDefaultValueDynamic)
        #expect(suite.object(forKey: key.name) as? Bool == true)
        #expect(suite.persistentValues().isEmpty)
    }

    @Test(arguments: SuiteKind.allCases)
    func resetTypedKeys(kind: SuiteKind) {
        let suite = kind.make()
        let first = Defaults.Key<Int>("first_resetTypedKe", default: 1, suite: suite)
        let second = Defaults.Key<String>("second_resetTypedKe", default: "a", suite: suite)
        let third = Defaults.Key<[Int]>("third_resetTypedKe", default: [], suite: suite)
        Defaults[first] = 5
        Defaults[second] = "b"
        Defaults[third] = [1]
        Defaults.reset(first, second)
        #expect(Defaults[first] == 1)
        #expect(Defaults[second] == "a")
        #expect(Defaults[third] == [1])
        Defaults.reset([third])
        #expect(Defaults[third] == [])
    }

    @Test(arguments: SuiteKind.allCases)
    func resetStringKeys(kind: SuiteKind) {
        let suite = kind.make()
        let first = Defaults.Key<Int>("first_resetStringK", default: 1, suite: suite)
        let second = Defaults.Key<Int>("second_resetStringK", default: 2, suite: suite)
        Defaults[first] = 10
        Defaults[second] = 20
        Defaults.reset("first_resetStringK", suite: suite)
        #expect(Defaults[first] == 1)
        #expect(Defaults[second] == 20)
        Defaults.reset(["second_resetStringK"], suite: suite)
        #expect(Defaults[second] == 2)
    }

    @Test(arguments: SuiteKind.allCases)
    func removeAllKeepsRegisteredDefaults(kind: SuiteKind) {
        let suite = kind.make()
        let first = Defaults.Key<Int>("first_removeAllKee", default: 1, suite: suite)
        let second = Defaults.Key<String?>("second_removeAllKee", suite: suite)
        Defaults[first] = 10
        Defaults[second] = "x"
        Defaults.removeAll(suite: suite)
        #expect(Defaults[first] == 1)
        #expect(Defaults[second] == nil)
        #expect(suite.persistentValues().isEmpty)
    }

    @Test(arguments: SuiteKind.allCases)
    func suiteSubscript(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Int>("count_suiteSubscri", default: 0, suite: suite)
        suite[key] += 2
        #expect(Defaults[key] == 2)
    }

    @Test func userDefaultsSubscriptAndKeyOverloads() throws {
        let name = "swift-defaults-tests-\(UUID().uuidString)"
        TemporarySuites.remember(name)
        let userDefaults = try #require(UserDefaults(suiteName: name))
        let key = Defaults.Key<Int>("count_userDefaults", default: 3, suite: userDefaults)
        #expect(userDefaults[key] == 3)
        #expect(userDefaults.integer(forKey: "count_userDefaults") == 3)
        userDefaults[key] = 4
        #expect(Defaults[key] == 4)
        #expect(userDefaults.integer(forKey: "count_userDefaults") == 4)
        Defaults.reset("count_userDefaults", suite: userDefaults)
        #expect(Defaults[key] == 3)
        Defaults[key] = 5
        Defaults.removeAll(suite: userDefaults)
        #expect(Defaults[key] == 3)
    }

    @Test func keysAreHashableByNameAndSuite() {
        let suite = InMemorySuite()
        let a = Defaults.Key<Int>("a", default: 0, suite: suite)
        let sameName = Defaults.Key<Int>("a", default: 1, suite: suite)
        let otherSuite = Defaults.Key<Int>("a", default: 0, suite: InMemorySuite())
        #expect(a == sameName as Defaults.Keys)
        #expect(a != otherSuite as Defaults.Keys)
        #expect(Set<Defaults.Keys>([a, sameName, otherSuite]).count == 2)
    }

    @Test func keyNameRules() {
        #expect(Defaults.isValidKeyName("isUnicornMode"))
        #expect(Defaults.isValidKeyName("with-dash_and_123"))
        #expect(!Defaults.isValidKeyName(""))
        #expect(!Defaults.isValidKeyName("@leading"))
        #expect(!Defaults.isValidKeyName("has.dot"))
        #expect(!Defaults.isValidKeyName("naïve"))
        #expect(Defaults.KeyNameProblem("has.dot")?.rule == .containsDot)
        #expect(Defaults.KeyNameProblem("@x")?.rule == .leadingAt)
        #expect(Defaults.KeyNameProblem("é")?.rule == .notASCII)
        #expect(Defaults.KeyNameProblem("fine") == nil)
        let message = Defaults.KeyNameProblem("has.dot")?.description ?? ""
        #expect(message.contains("\"has.dot\""))
        #expect(message.contains("must not contain \".\""))
    }
}

/// A thread-safe counter for dynamic defaults.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func next() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}
