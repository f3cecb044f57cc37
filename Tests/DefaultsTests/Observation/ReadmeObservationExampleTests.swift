import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// The keys of the README's observation examples, in a suite of their own.
let readmeObservationSuite = InMemorySuite()

extension Defaults.Keys {
    static let observedUnicornMode = Key<Bool>("observedUnicornMode", default: false, suite: readmeObservationSuite)
    static let observedVolume = Key<Int>("observedVolume", default: 5, suite: readmeObservationSuite)
    static let observedName = Key<String?>("observedName", suite: readmeObservationSuite)
}

extension ObservationTests {
    /// The README's observation examples, written with implicit members as users write them.
    @Suite("README examples", .serialized)
    struct ReadmeObservationExampleTests {
        @Test func updatesExamples() async throws {
            let values = ObservationRecorder<String>()
            let single = Task {
                for await isOn in Defaults.updates(.observedUnicornMode) {
                    values.append("unicorn \(isOn)")
                }
            }
            try await values.wait(count: 1)
            let tuple = Task {
                for await (isOn, volume) in Defaults.updates(.observedUnicornMode, .observedVolume, initial: false) {
                    values.append("tuple \(isOn) \(volume)")
                }
            }
            let any = Task {
                for await _ in Defaults.updates([.observedUnicornMode, .observedVolume], initial: false) {
                    values.append("any")
                }
            }
            try await waitUntil { readmeObservationSuite.changes.observerCount == 3 }
            Defaults[.observedUnicornMode] = true
            try await values.wait(count: 4)
            #expect(Set(values.values) == ["unicorn false", "unicorn true", "tuple true 5", "any"])
            for task in [single, tuple, any] {
                task.cancel()
                await task.value
            }
            #expect(readmeObservationSuite.changes.observerCount == 0)
            Defaults.reset(.observedUnicornMode)
        }

        @Test func changesExample() async throws {
            let values = ObservationRecorder<String>()
            let task = Task {
                for await change in Defaults.changes(.observedName) {
                    if change.isInitial {
                        values.append("initial \(change.newValue ?? "nil")")
                    } else {
                        values.append("update \(change.oldValue ?? "nil") to \(change.newValue ?? "nil")")
                    }
                }
            }
            try await values.wait(count: 1)
            Defaults[.observedName] = "Ann"
            try await values.wait(count: 2)
            #expect(values.values == ["initial nil", "update nil to Ann"])
            task.cancel()
            await task.value
            Defaults.reset(.observedName)
        }

        @Test func observeExamples() {
            let values = ObservationRecorder<String>()
            let observation = Defaults.observe(.observedVolume) { change in
                values.append("\(change.oldValue) → \(change.newValue)")
            }
            let several = Defaults.observe(keys: .observedUnicornMode, .observedVolume, options: []) {
                values.append("settings changed")
            }
            Defaults[.observedVolume] = 7
            #expect(values.values == ["5 → 5", "5 → 7", "settings changed"])
            observation.invalidate()
            several.invalidate()
            Defaults.reset(.observedVolume)
        }

        @Test func tieToLifetimeExample() {
            final class Player: Sendable {
                let volumes = ObservationRecorder<Int>()

                init() {
                    Defaults.observe(.observedVolume) { [volumes] change in
                        volumes.append(change.newValue)
                    }
                    .tieToLifetime(of: self)
                }
            }
            var player: Player? = Player()
            Defaults[.observedVolume] = 8
            #expect(player?.volumes.values == [5, 8])
            player = nil
            #expect(readmeObservationSuite.changes.observerCount == 0)
            Defaults.reset(.observedVolume)
        }

        @Test func withoutPropagationExample() {
            let calls = Atomic(0)
            let observation = Defaults.observe(.observedVolume) { change in
                calls.add(1, ordering: .relaxed)
                Defaults.withoutPropagation {
                    Defaults[.observedVolume] = min(change.newValue, 10)
                }
            }
            Defaults[.observedVolume] = 50
            #expect(Defaults[.observedVolume] == 10)
            #expect(calls.load(ordering: .relaxed) == 2)
            observation.invalidate()
            Defaults.reset(.observedVolume)
        }
    }
}
