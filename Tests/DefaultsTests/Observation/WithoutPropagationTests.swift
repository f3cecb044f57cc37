import Defaults
import Foundation
import Synchronization
import Testing

extension ObservationTests {
    @Suite("withoutPropagation")
    struct WithoutPropagationTests {
        /// The example of the Defaults README: observing two keys, updating one of them inside the
        /// handler without telling anyone, and another key with telling.
        @Test(arguments: ObservedSuiteKind.allCases)
        func readmeExample(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key1 = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let key2 = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let someKey = Defaults.Key<Bool>(uniqueKeyName(), default: false, suite: suite)
            let calls = Atomic(0)
            let someKeyChanges = ObservationRecorder<Bool>()
            let key1Changes = ObservationRecorder<Int>()
            let someKeyObservation = Defaults.observe(someKey, options: []) { someKeyChanges.append($0.newValue) }
            let key1Observation = Defaults.observe(key1, options: []) { key1Changes.append($0.newValue) }
            let observer = Defaults.observe(keys: key1, key2) {
                calls.add(1, ordering: .relaxed)
                Defaults.withoutPropagation {
                    // Update `key1` without propagating the change to listeners.
                    Defaults[key1] = 11
                }
                // This will be propagated.
                Defaults[someKey] = true
            }
            defer {
                observer.invalidate()
                someKeyObservation.invalidate()
                key1Observation.invalidate()
            }
            #expect(calls.load(ordering: .relaxed) == 1)
            Defaults[key2] = 5
            #expect(calls.load(ordering: .relaxed) == 2)
            #expect(Defaults[key1] == 11)
            #expect(key1Changes.values.isEmpty)
            #expect(someKeyChanges.values == [true])
        }

        /// Updating the same key inside its own observer must not recurse.
        @Test(arguments: ObservedSuiteKind.allCases)
        func updatingTheObservedKeyInsideItsObserver(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let other = ObservationRecorder<Int>()
            let observation = Defaults.observe(key, options: []) { change in
                recorder.append(change.newValue)
                // Without `withoutPropagation`, this would notify this handler of every new value.
                Defaults.withoutPropagation {
                    Defaults[key] = change.newValue + 1
                }
            }
            let otherObservation = Defaults.observe(key, options: []) { other.append($0.newValue) }
            defer {
                observation.invalidate()
                otherObservation.invalidate()
            }
            Defaults[key] = 10
            #expect(recorder.values == [10])
            #expect(Defaults[key] == 11)
            // No observer of this process hears about the change made inside the closure. (The
            // other observer is told about the same change to 10: observers of one key share one
            // read and decode of each change.)
            #expect(other.values == [10])
            // The next change reports the value the observer last saw as the old one.
            Defaults[key] = 20
            #expect(recorder.values == [10, 20])
            #expect(Defaults[key] == 21)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func updatesDoNotSeeSuppressedChanges(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            defer { task.cancel() }
            Defaults.withoutPropagation {
                Defaults[key] = 1
                Defaults.reset(key)
                Defaults[key] = 2
            }
            Defaults[key] = 3
            try await recorder.wait(count: 2)
            #expect(recorder.values == [0, 3])
            // The value is stored all the same.
            #expect(Defaults[key] == 3)
        }

        @Test func returnsTheClosuresResultAndRethrows() throws {
            struct Failure: Error {}
            #expect(Defaults.withoutPropagation { 5 } == 5)
            #expect(throws: Failure.self) {
                try Defaults.withoutPropagation { throw Failure() }
            }
        }
    }
}
