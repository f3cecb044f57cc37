import Defaults
import Foundation
import Testing

extension Trust {
    /// Item 9: Defaults API that was missing, with Defaults' meaning.
    @Suite struct DefaultsAPITests {
        @Test(arguments: SuiteKind.withFileSuite)
        func isDefaultValue(kind: SuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Double>("quality", default: 0.8, suite: suite)
            #expect(key.isDefaultValue)
            Defaults[key] = 0.5
            #expect(!key.isDefaultValue)
            Defaults[key] = 0.8
            #expect(key.isDefaultValue)
            key.reset()
            #expect(key.isDefaultValue)
            let optional = Defaults.Key<String?>("name", suite: suite)
            #expect(optional.isDefaultValue)
            Defaults[optional] = "x"
            #expect(!optional.isDefaultValue)
        }

        @Test func userDefaultsRemoveAll() throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            TemporarySuites.remember(name)
            let defaults = try #require(UserDefaults(suiteName: name))
            let key = Defaults.Key<Int>("removeAllCount", default: 1, suite: defaults)
            defaults[key] = 7
            defaults.set("x", forKey: "removeAllOther")
            defaults.removeAll()
            #expect(defaults[key] == 1)
            #expect(defaults.object(forKey: "removeAllOther") == nil)
        }

        /// A type stored through a bridge built from Codable parts: a range of a `Codable` bound.
        struct Version: Codable, Comparable, Defaults.Serializable {
            var major: Int
            var minor: Int
            static func < (lhs: Self, rhs: Self) -> Bool { (lhs.major, lhs.minor) < (rhs.major, rhs.minor) }
        }

        /// Defaults stores each bound as a JSON string, so the suite holds `[String]` of JSON,
        /// which code reading the suite directly (`array(forKey:)`) gets back.
        @Test(arguments: SuiteKind.withFileSuite)
        func rangeOfCodableIsStoredAsJSONStrings(kind: SuiteKind) throws {
            let suite = kind.make()
            let key = Defaults.Key<Range<Version>>(
                "supported", default: Version(major: 0, minor: 0)..<Version(major: 0, minor: 1), suite: suite)
            let range = Version(major: 1, minor: 2)..<Version(major: 3, minor: 4)
            Defaults[key] = range
            let stored = try #require(suite.array(forKey: "supported") as? [String])
            #expect(stored.count == 2)
            let decoded = try stored.map { try JSONDecoder().decode(Version.self, from: Data($0.utf8)) }
            #expect(decoded == [range.lowerBound, range.upperBound])
            #expect(Defaults[key] == range)
            // And the other way: JSON strings written by other code read as the range.
            suite.set([#"{"major":5,"minor":0}"#, #"{"major":6,"minor":0}"#], forKey: "supported")
            #expect(Defaults[key] == Version(major: 5, minor: 0)..<Version(major: 6, minor: 0))
        }
    }
}
