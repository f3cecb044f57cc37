import Defaults
import Foundation
import Synchronization
import Testing

private let wrapperHomeSuite = InMemorySuite(name: "wrapper-home")

extension Defaults.Keys {
    fileprivate static let wrapperVolume = Key<Int>("wrapperVolume", default: 5, suite: wrapperHomeSuite)
    fileprivate static let wrapperName = Key<String?>("wrapperName", suite: wrapperHomeSuite)
    fileprivate static let wrapperLaunchedAt = Key<Date>("wrapperLaunchedAt", suite: wrapperHomeSuite) {
        Date(timeIntervalSince1970: 1_000)
    }
}

/// Settings as a struct, pointed at a suite when created.
private struct StructSettings {
    @Default var volume: Int
    @Default var name: String?

    init(suite: any DefaultsSuite) {
        _volume = Default(.wrapperVolume, suite: suite)
        _name = Default(.wrapperName, suite: suite)
    }
}

/// The same settings as a class.
private final class ClassSettings {
    @Default var volume: Int
    @Default var name: String?

    init(suite: any DefaultsSuite) {
        _volume = Default(.wrapperVolume, suite: suite)
        _name = Default(.wrapperName, suite: suite)
    }
}

/// Settings in the keys' own suite, declared the short way.
private struct HomeSettings {
    @Default(.wrapperLaunchedAt) var launchedAt
}

extension Integrations {
    @Suite struct DefaultPropertyWrapperTests {
        @Test func structAndClassPointedAtTwoSuites() {
            let first = InMemorySuite()
            let second = InMemorySuite()
            let inStruct = StructSettings(suite: first)
            let inClass = ClassSettings(suite: second)
            #expect(inStruct.volume == 5)
            #expect(inClass.volume == 5)

            // The struct is a `let`: the setter is nonmutating, it writes through the key.
            inStruct.volume = 7
            inClass.volume = 9
            inStruct.name = "first"
            #expect(first.object(forKey: "wrapperVolume") as? Int == 7)
            #expect(second.object(forKey: "wrapperVolume") as? Int == 9)
            #expect(second.object(forKey: "wrapperName") == nil)
            #expect(inClass.name == nil)
            #expect(wrapperHomeSuite.object(forKey: "wrapperVolume") as? Int == 5)  // the registered default only

            // Every copy and every instance on the same suite sees the same value.
            let copy = inStruct
            #expect(copy.volume == 7)
            #expect(StructSettings(suite: second).volume == 9)
            #expect(ClassSettings(suite: first).name == "first")
            #expect(first[.wrapperVolume.in(first)] == 7)
        }

        @Test func projectedValueResets() {
            let suite = InMemorySuite()
            let settings = ClassSettings(suite: suite)
            settings.volume = 8
            settings.name = "x"
            settings.$volume.reset()
            settings.$name.reset()
            #expect(settings.volume == 5)
            #expect(settings.name == nil)
            #expect(suite.persistentValues().isEmpty)
        }

        @Test func projectedValueObserves() {
            let suite = InMemorySuite()
            let settings = StructSettings(suite: suite)
            let seen = Mutex<[Int]>([])
            let observation = settings.$volume.observe { change in
                seen.withLock { $0.append(change.newValue) }
            }
            settings.volume = 6
            Defaults[Defaults.Keys.wrapperVolume.in(suite)] = 7
            observation.invalidate()
            settings.volume = 8
            #expect(seen.withLock { $0 } == [5, 6, 7])
        }

        @Test func projectedValueUpdates() async {
            let suite = InMemorySuite()
            let settings = ClassSettings(suite: suite)
            let updates = settings.$volume.updates()
            settings.volume = 1
            settings.volume = 2
            var values: [Int] = []
            for await value in updates {
                values.append(value)
                if values.count == 3 { break }
            }
            #expect(values == [5, 1, 2])
        }

        @Test func keyInAnotherSuiteKeepsNameAndDefaults() {
            let suite = InMemorySuite()
            let moved = Defaults.Keys.wrapperVolume.in(suite)
            #expect(moved.name == "wrapperVolume")
            #expect(moved.suite === suite)
            #expect(moved.defaultValue == 5)
            #expect(suite.object(forKey: "wrapperVolume") as? Int == 5)  // static default registered
            #expect(Defaults.Keys.wrapperVolume.in(wrapperHomeSuite) === Defaults.Keys.wrapperVolume)

            let launched = Defaults.Keys.wrapperLaunchedAt.in(suite)
            #expect(launched.isDefaultValueDynamic)
            #expect(Defaults[launched] == Date(timeIntervalSince1970: 1_000))
            #expect(HomeSettings().launchedAt == Date(timeIntervalSince1970: 1_000))
        }
    }
}
