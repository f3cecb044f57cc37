import Defaults
import Foundation
import Testing

extension Integrations {
    @Suite struct KeyCollisionTests {
        @Test func collisionIsReportedWithBothDeclarations() throws {
            let suite = InMemorySuite(name: "collisions")
            let (first, second) = (
                Defaults.Key<Int>("id", default: 0, suite: suite),
                Defaults.Key<String>("id", default: "", suite: suite)
            )
            let conflicts = Defaults.KeyRegistry.conflicts(in: suite)
            try #require(conflicts.count == 1)
            let conflict = conflicts[0]
            #expect(conflict.name == "id")
            #expect(conflict.suiteName == "collisions")
            #expect(
                conflict.declarations.map { ObjectIdentifier($0.valueType) } == [
                    ObjectIdentifier(Int.self), ObjectIdentifier(String.self),
                ])
            #expect(conflict.declarations.allSatisfy { $0.file == "DefaultsTests/KeyCollisionTests.swift" })
            let lines = conflict.declarations.map(\.line)
            #expect(lines[0] + 1 == lines[1])
            let message = conflict.description
            #expect(message.contains("Key<Swift.Int>(\"id\") at DefaultsTests/KeyCollisionTests.swift:\(lines[0])"))
            #expect(message.contains("Key<Swift.String>(\"id\") at DefaultsTests/KeyCollisionTests.swift:\(lines[1])"))
            #expect(message.contains("suite \"collisions\""))
            #expect(Defaults.KeyRegistry.conflicts.contains(conflict))
            withExtendedLifetime((first, second)) {}
        }

        @Test func sameTypeOptionalOrOtherSuiteIsNoCollision() {
            let suite = InMemorySuite()
            let other = InMemorySuite()
            let keys: [Defaults.Keys] = [
                Defaults.Key<Int>("count", default: 0, suite: suite),
                Defaults.Key<Int?>("count", suite: suite),
                Defaults.Key<Int>("count", default: 1, suite: suite),
                Defaults.Key<String>("count", default: "", suite: other),
            ]
            #expect(Defaults.KeyRegistry.conflicts(in: suite).isEmpty)
            #expect(Defaults.KeyRegistry.conflicts(in: other).isEmpty)
            let declared = Defaults.KeyRegistry.declarations(in: suite)
            #expect(declared.count == 3)
            #expect(declared.allSatisfy { $0.name == "count" && $0.suiteName == suite.name })
            withExtendedLifetime(keys) {}
        }

        @Test func keysOfAReleasedSuiteAreForgotten() {
            var suite: InMemorySuite? = InMemorySuite(name: "released-suite")
            _ = suite.map { Defaults.Key<Int>("gone", default: 0, suite: $0) }
            _ = suite.map { Defaults.Key<Bool>("gone", default: false, suite: $0) }
            #expect(Defaults.KeyRegistry.conflicts.contains { $0.suiteName == "released-suite" })
            suite = nil
            #expect(!Defaults.KeyRegistry.conflicts.contains { $0.suiteName == "released-suite" })
            #expect(!Defaults.KeyRegistry.declarations.contains { $0.suiteName == "released-suite" })
        }
    }
}
