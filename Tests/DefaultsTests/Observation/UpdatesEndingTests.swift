import Defaults
import Foundation
import TestSupport
import Testing

extension ObservationTests {
    /// How an `updates` sequence ends. It is an `AsyncStream` of stored changes underneath; a
    /// plain `AsyncStream` would still hand out the changes it holds once its task is cancelled
    /// or another loop over it has ended it. These show the sequence ends at once instead.
    @Suite("updates ending")
    struct UpdatesEndingTests {
        @Test(arguments: ObservedSuiteKind.allCases)
        func aCancelledLoopEndsAtOnceWithoutTheChangesItHolds(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let updates = Defaults.updates(key, initial: false)
            Defaults[key] = 1
            Defaults[key] = 2
            let task = Task { () -> [Int] in
                withUnsafeCurrentTask { $0?.cancel() }
                var seen: [Int] = []
                for await value in updates {
                    seen.append(value)
                }
                return seen
            }
            // A plain AsyncStream would give [1, 2] here.
            #expect(await task.value == [])
            #expect(suite.changes.observerCount == 0)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func twoLoopsShareTheChangesAndCancellingOneEndsBoth(kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let updates = Defaults.updates(key, initial: false)
            let recorder = ObservationRecorder<Int>()
            let first = recordUpdates(updates, into: recorder)
            let second = recordUpdates(updates, into: recorder)
            for value in 1...20 {
                Defaults[key] = value
            }
            // Each change is taken once, by one of the loops.
            try await recorder.wait(count: 20)
            #expect(recorder.values.sorted() == Array(1...20))
            first.cancel()
            // The other loop ends too, even with changes made after the cancellation.
            Defaults[key] = 21
            await second.value
            #expect(suite.changes.observerCount == 0)
            #expect(recorder.values.count <= 21)
        }
    }
}
