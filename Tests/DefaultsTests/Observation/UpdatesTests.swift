import Defaults
import Foundation
import TestSupport
import Testing

extension ObservationTests {
    @Suite("updates")
    struct UpdatesTests {
        @Test(arguments: ObservedSuiteKind.allCases)
        func currentValueFirstThenEachChange(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            defer { task.cancel() }
            Defaults[key] = 1
            Defaults[key] = 2
            try await recorder.wait(count: 3)
            #expect(recorder.values == [0, 1, 2])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func withoutInitialOnlyChanges(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<String>(uniqueKeyName(), default: "a", suite: suite)
            let recorder = ObservationRecorder<String>()
            // The sequence observes from its creation: a change made before the loop starts is kept.
            let updates = Defaults.updates(key, initial: false)
            Defaults[key] = "b"
            let task = recordUpdates(updates, into: recorder)
            defer { task.cancel() }
            Defaults[key] = "c"
            try await recorder.wait(count: 2)
            #expect(recorder.values == ["b", "c"])
        }

        @Test(arguments: ObservedSuiteKind.allCases, ChangePath.allCases)
        func everyChangePathArrivesOnce(kind: ObservedSuiteKind, path: ChangePath) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let sentinel = Defaults.Key<Int>(uniqueKeyName("sentinel"), default: 0, suite: suite)
            if !path.setsValue {
                Defaults[key] = 5
            }
            let recorder = ObservationRecorder<Int>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            defer { task.cancel() }
            path.apply(to: key, value: 7)
            // An equal write notifies no one, whichever path makes it.
            path.apply(to: key, value: 7)
            Defaults[sentinel] = 1
            Defaults[key] = 100
            try await recorder.wait(count: 3)
            #expect(recorder.values == [path.setsValue ? 0 : 5, path.setsValue ? 7 : 0, 100])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func equalWritesNotifyNoOne(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<[String]>(uniqueKeyName(), default: [], suite: suite)
            let recorder = ObservationRecorder<[String]>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            defer { task.cancel() }
            Defaults[key] = ["a"]
            Defaults[key] = ["a"]
            suite[key] = ["a"]
            Defaults[key] = ["a", "b"]
            try await recorder.wait(count: 3)
            #expect(recorder.values == [[], ["a"], ["a", "b"]])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func optionalKeyNotifiesNilOnRemoval(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<String?>(uniqueKeyName(), suite: suite)
            let recorder = ObservationRecorder<String?>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            defer { task.cancel() }
            Defaults[key] = "unicorn"
            Defaults[key] = nil
            Defaults[key] = "again"
            key.reset()
            try await recorder.wait(count: 5)
            #expect(recorder.values == [nil, "unicorn", nil, "again", nil])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func dynamicDefaultReportsComputedValue(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), suite: suite) { 42 }
            let recorder = ObservationRecorder<Int>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            defer { task.cancel() }
            Defaults[key] = 1
            Defaults.reset(key)
            try await recorder.wait(count: 3)
            #expect(recorder.values == [42, 1, 42])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func severalKeysYieldOnAnyChange(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let first = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let second = Defaults.Key<Bool>(uniqueKeyName(), default: false, suite: suite)
            let unrelated = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<String>()
            let updates = Defaults.updates([first, second])
            let task = Task {
                for await _ in updates {
                    recorder.append("\(Defaults[first]) \(Defaults[second])")
                }
            }
            defer { task.cancel() }
            try await recorder.wait(count: 1)
            Defaults[unrelated] = 3
            Defaults[first] = 1
            try await recorder.wait(count: 2)
            Defaults[second] = true
            try await recorder.wait(count: 3)
            // One removeAll changes both keys at once: one element.
            Defaults.removeAll(suite: suite)
            try await recorder.wait(count: 4)
            Defaults[first] = 9
            try await recorder.wait(count: 5)
            #expect(recorder.values == ["0 false", "1 false", "1 true", "0 false", "9 false"])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func variadicKeysYieldTuplesOfCurrentValues(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let other = InMemorySuite()
            let count = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let name = Defaults.Key<String?>(uniqueKeyName(), suite: suite)
            let elsewhere = Defaults.Key<Double>(uniqueKeyName(), default: 0.5, suite: other)
            let recorder = ObservationRecorder<String>()
            let updates = Defaults.updates(count, name, elsewhere)
            let task = Task {
                for await (count, name, elsewhere) in updates {
                    recorder.append("\(count) \(name ?? "-") \(elsewhere)")
                }
            }
            defer { task.cancel() }
            Defaults[count] = 1
            Defaults[name] = "x"
            Defaults[elsewhere] = 1.5
            name.reset()
            try await recorder.wait(count: 5)
            #expect(recorder.values == ["0 - 0.5", "1 - 0.5", "1 x 0.5", "1 x 1.5", "1 - 1.5"])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func changesSayWhetherInitialOrUpdate(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 3, suite: suite)
            let recorder = ObservationRecorder<Defaults.KeyChange<Int>>()
            let task = recordUpdates(Defaults.changes(key), into: recorder)
            defer { task.cancel() }
            Defaults[key] = 4
            try await recorder.wait(count: 2)
            #expect(recorder.values.map(\.newValue) == [3, 4])
            #expect(recorder.values.map(\.oldValue) == [3, 3])
            #expect(recorder.values.map(\.isInitial) == [true, false])

            let withoutInitial = ObservationRecorder<Defaults.KeyChange<Int>>()
            let second = recordUpdates(Defaults.changes(key, initial: false), into: withoutInitial)
            defer { second.cancel() }
            Defaults[key] = 5
            try await withoutInitial.wait(count: 1)
            #expect(withoutInitial.values.map { [$0.oldValue, $0.newValue] } == [[4, 5]])
            #expect(withoutInitial.values.map(\.isInitial) == [false])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func cancellingTheTaskRemovesTheObserverAndReleasesEverything(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let recorder = ObservationRecorder<Int>()
            weak var weakKey: Defaults.Key<Int>?
            let task: Task<Void, Never>
            do {
                let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
                weakKey = key
                task = recordUpdates(Defaults.updates(key), into: recorder)
                try await recorder.wait(count: 1)
                #expect(suite.changes.observerCount == 1)
            }
            task.cancel()
            await task.value
            #expect(suite.changes.observerCount == 0)
            // Nothing holds the key any more: not the suite, not the finished sequence.
            #expect(weakKey == nil)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func leavingTheLoopRemovesTheObserver(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let task = Task {
                for await value in Defaults.updates(key) where value == 2 {
                    break
                }
            }
            // Wait for the loop's observer, then change the key until the loop leaves.
            try await waitUntil { suite.changes.observerCount == 1 }
            Defaults[key] = 1
            Defaults[key] = 2
            await task.value
            #expect(suite.changes.observerCount == 0)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func aSequenceThatIsNeverIteratedLeavesNothingBehind(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            do {
                let updates = Defaults.updates(key)
                _ = updates
                #expect(suite.changes.observerCount == 1)
            }
            #expect(suite.changes.observerCount == 0)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func changesMadeOnManyThreadsArriveInOrderOnce(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let task = recordUpdates(Defaults.updates(key, initial: false), into: recorder)
            defer { task.cancel() }
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 1...250 {
                    Defaults[key] = thread * 1000 + index
                }
            }
            Defaults[key] = -1
            try await waitUntil { recorder.values.last == -1 }
            let values = recorder.values
            // No two neighbours are equal (each element is a change), and the last is the final value.
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 != $1 })
            #expect(values.count <= 1001)
        }

        /// Values need not be Sendable: they are decoded in the consumer's isolation.
        @MainActor
        @Test func nonSendableValuesOnTheMainActor() async {
            let suite = InMemorySuite()
            let key = Defaults.Key<ObservedNote?>(uniqueKeyName(), suite: suite)
            var seen: [String] = []
            Defaults[key] = ObservedNote("first")
            for await note in Defaults.updates(key) {
                seen.append(note?.text ?? "-")
                if seen.count == 1 {
                    Defaults[key] = ObservedNote("second")
                } else {
                    break
                }
            }
            #expect(seen == ["first", "second"])
            #expect(suite.changes.observerCount == 0)
        }
    }
}
