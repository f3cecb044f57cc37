import Defaults
import Foundation
import Synchronization
import Testing

extension ObservationTests {
    @Suite("observe")
    struct ObserveTests {
        struct Seen: Equatable, Sendable {
            var old: Int
            var new: Int
            var isInitial = false
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func initialValueArrivesBeforeObserveReturns(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 4, suite: suite)
            for options: Defaults.ObservationOptions in [
                [.initial], [.prioritizedInitial], [.initial, .prioritizedInitial],
            ] {
                let recorder = ObservationRecorder<Seen>()
                let observation = Defaults.observe(key, options: options) { change in
                    recorder.append(Seen(old: change.oldValue, new: change.newValue, isInitial: change.isInitial))
                }
                #expect(recorder.values == [Seen(old: 4, new: 4, isInitial: true)])
                observation.invalidate()
            }
            // The default options ask for the initial value too.
            let recorder = ObservationRecorder<Int>()
            let observation = Defaults.observe(key) { recorder.append($0.newValue) }
            #expect(recorder.values == [4])
            observation.invalidate()
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func oldValueIsThePreviousNewValue(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            Defaults[key] = 1
            let recorder = ObservationRecorder<Seen>()
            let observation = Defaults.observe(key, options: []) { change in
                recorder.append(Seen(old: change.oldValue, new: change.newValue, isInitial: change.isInitial))
            }
            defer { observation.invalidate() }
            #expect(recorder.values.isEmpty)
            Defaults[key] = 2
            Defaults[key] = 3
            key.reset()
            // The handler runs before the write returns.
            #expect(recorder.values == [Seen(old: 1, new: 2), Seen(old: 2, new: 3), Seen(old: 3, new: 0)])
        }

        @Test(arguments: ObservedSuiteKind.allCases, ChangePath.allCases)
        func everyChangePathCallsTheHandlerOnce(kind: ObservedSuiteKind, path: ChangePath) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            if !path.setsValue {
                Defaults[key] = 5
            }
            let recorder = ObservationRecorder<Seen>()
            let observation = Defaults.observe(key, options: []) { change in
                recorder.append(Seen(old: change.oldValue, new: change.newValue))
            }
            defer { observation.invalidate() }
            path.apply(to: key, value: 7)
            path.apply(to: key, value: 7)
            #expect(recorder.values == [path.setsValue ? Seen(old: 0, new: 7) : Seen(old: 5, new: 0)])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func optionalAndDynamicDefaults(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let optional = Defaults.Key<String?>(uniqueKeyName(), suite: suite)
            let dynamic = Defaults.Key<Int>(uniqueKeyName(), suite: suite) { 42 }
            let names = ObservationRecorder<String?>()
            let numbers = ObservationRecorder<Int>()
            let first = Defaults.observe(optional, options: []) { names.append($0.newValue) }
            let second = Defaults.observe(dynamic) { numbers.append($0.newValue) }
            defer {
                first.invalidate()
                second.invalidate()
            }
            Defaults[optional] = "a"
            Defaults[optional] = nil
            Defaults[dynamic] = 1
            Defaults.removeAll(suite: suite)
            #expect(names.values == ["a", nil])
            #expect(numbers.values == [42, 1, 42])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func severalKeysAcrossSuites(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let other = InMemorySuite()
            let first = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let second = Defaults.Key<String>(uniqueKeyName(), default: "", suite: other)
            let unrelated = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let calls = Atomic(0)
            let observation = Defaults.observe(keys: first, second) { calls.add(1, ordering: .relaxed) }
            #expect(calls.load(ordering: .relaxed) == 1)
            Defaults[first] = 1
            Defaults[second] = "x"
            Defaults[unrelated] = 2
            Defaults[first] = 1
            #expect(calls.load(ordering: .relaxed) == 3)
            observation.invalidate()
            Defaults[first] = 2
            #expect(calls.load(ordering: .relaxed) == 3)
            #expect(suite.changes.observerCount == 0)
            #expect(other.changes.observerCount == 0)

            let withoutInitial = Defaults.observe(keys: [first, second], options: []) {
                calls.add(1, ordering: .relaxed)
            }
            #expect(calls.load(ordering: .relaxed) == 3)
            Defaults.removeAll(suite: suite)
            #expect(calls.load(ordering: .relaxed) == 4)
            withoutInitial.invalidate()
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func invalidatingOrDroppingRemovesTheObserver(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let observation = Defaults.observe(key, options: []) { recorder.append($0.newValue) }
            #expect(observation.isValid)
            #expect(suite.changes.observerCount == 1)
            observation.invalidate()
            observation.invalidate()
            #expect(!observation.isValid)
            #expect(suite.changes.observerCount == 0)
            Defaults[key] = 1
            #expect(recorder.values.isEmpty)

            // As in Defaults (and KVO), an observation nobody references stops.
            weak var weakObservation: Defaults.Observation?
            do {
                let dropped = Defaults.observe(key, options: []) { recorder.append($0.newValue) }
                weakObservation = dropped
                #expect(suite.changes.observerCount == 1)
            }
            #expect(weakObservation == nil)
            #expect(suite.changes.observerCount == 0)
            Defaults[key] = 2
            #expect(recorder.values.isEmpty)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func tiedObservationLivesExactlyAsLongAsItsObject(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            var owner: LifetimeOwner? = LifetimeOwner()
            weak let weakOwner = owner
            weak var weakObservation: Defaults.Observation?
            do {
                let observation = Defaults.observe(key, options: []) { [weak owner] change in
                    if owner != nil {
                        recorder.append(change.newValue)
                    }
                }
                if let owner {
                    observation.tieToLifetime(of: owner)
                }
                weakObservation = observation
            }
            // Nobody but the tie holds the observation, and it keeps running.
            #expect(weakObservation != nil)
            Defaults[key] = 1
            #expect(recorder.values == [1])
            #expect(suite.changes.observerCount == 1)

            owner = nil
            #expect(weakOwner == nil)
            #expect(suite.changes.observerCount == 0)
            #expect(weakObservation == nil)
            Defaults[key] = 2
            #expect(recorder.values == [1])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func tiedObservationStopsAtTheNextChangeAfterItsObjectIsGone(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let calls = Atomic(0)
            var owner: LifetimeOwner? = LifetimeOwner()
            weak var weakObservation: Defaults.Observation?
            do {
                let observation = Defaults.observe(key, options: []) { _ in calls.add(1, ordering: .relaxed) }
                weakObservation = observation.tieToLifetime(of: owner ?? LifetimeOwner())
            }
            owner = nil
            // A post finds the tie broken: the handler is not called and the observation is released.
            Defaults[key] = 1
            #expect(calls.load(ordering: .relaxed) == 0)
            #expect(weakObservation == nil)
            #expect(suite.changes.observerCount == 0)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func removingTheLifetimeTie(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let owner = LifetimeOwner()
            weak var weakObservation: Defaults.Observation?
            do {
                let observation = Defaults.observe(key, options: []) { _ in }.tieToLifetime(of: owner)
                weakObservation = observation
                observation.removeLifetimeTie()
                #expect(observation.isValid)
            }
            // Untied, it lives as long as a reference to it, like any observation.
            #expect(weakObservation == nil)
            #expect(suite.changes.observerCount == 0)
            withExtendedLifetime(owner) {}

            // Removing the tie after the object is gone leaves the observation invalidated.
            var shortLived: LifetimeOwner? = LifetimeOwner()
            let observation = Defaults.observe(key, options: []) { _ in }
            if let shortLived {
                observation.tieToLifetime(of: shortLived)
            }
            shortLived = nil
            observation.removeLifetimeTie()
            #expect(!observation.isValid)
            #expect(suite.changes.observerCount == 0)
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func handlerIsNeverCalledConcurrentlyAndSeesEveryChangeInOrder(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let isInside = Atomic(false)
            let overlaps = Atomic(0)
            let recorder = ObservationRecorder<Seen>()
            let observation = Defaults.observe(key, options: []) { change in
                if isInside.exchange(true, ordering: .acquiringAndReleasing) {
                    overlaps.add(1, ordering: .relaxed)
                }
                recorder.append(Seen(old: change.oldValue, new: change.newValue))
                isInside.store(false, ordering: .releasing)
            }
            defer { observation.invalidate() }
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 1...250 {
                    Defaults[key] = thread * 1000 + index
                }
            }
            let seen = recorder.values
            #expect(overlaps.load(ordering: .relaxed) == 0)
            #expect(seen.first?.old == 0)
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.new == $1.old && $1.old != $1.new })
            #expect(seen.last?.new == Defaults[key])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func changeMadeByTheHandlerArrivesAfterItReturns(kind: ObservedSuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let depth = Atomic(0)
            let maximumDepth = Atomic(0)
            let recorder = ObservationRecorder<Seen>()
            // Clamps the value without `withoutPropagation`: the clamp is delivered as a change of its
            // own, after the call that made it, and the equal write that follows notifies no one.
            let observation = Defaults.observe(key, options: []) { change in
                let current = depth.add(1, ordering: .relaxed).newValue
                maximumDepth.max(current, ordering: .relaxed)
                recorder.append(Seen(old: change.oldValue, new: change.newValue))
                Defaults[key] = min(change.newValue, 10)
                depth.subtract(1, ordering: .relaxed)
            }
            defer { observation.invalidate() }
            Defaults[key] = 50
            #expect(recorder.values == [Seen(old: 0, new: 50), Seen(old: 50, new: 10)])
            #expect(maximumDepth.load(ordering: .relaxed) == 1)
            #expect(Defaults[key] == 10)
        }

        @Test func nonSendableValues() {
            let suite = InMemorySuite()
            let key = Defaults.Key<ObservedNote?>(uniqueKeyName(), suite: suite)
            let recorder = ObservationRecorder<String>()
            let observation = Defaults.observe(key, options: []) { change in
                recorder.append("\(change.oldValue?.text ?? "-") \(change.newValue?.text ?? "-")")
            }
            defer { observation.invalidate() }
            Defaults[key] = ObservedNote("a")
            Defaults[key] = ObservedNote("b")
            #expect(recorder.values == ["- a", "a b"])
        }

        @Test func keyChangeSaysWhetherInitialOrUpdate() {
            let suite = InMemorySuite()
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 1, suite: suite)
            let recorder = ObservationRecorder<Defaults.KeyChange<Int>>()
            let observation = Defaults.observe(key) { recorder.append($0) }
            defer { observation.invalidate() }
            Defaults[key] = 2
            #expect(recorder.values.map(\.isInitial) == [true, false])
            #expect(recorder.values.map(\.newValue) == [1, 2])
        }
    }
}
