import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// A class value: observers of it do not share a broadcast; each decodes its own instance.
private final class Tally: Codable, Defaults.Serializable {
    let count: Int

    init(_ count: Int) {
        self.count = count
    }
}

/// One key observed from many tasks at once while many tasks write it: every observer ends on the
/// last value, for a value type (observers share one broadcast) and a class (each has its own
/// observation).
@Suite("One key observed from many tasks", .mayBlock)
struct ManyTasksObservationTests {
    static let observers = 30
    static let writes = 40

    @Test(arguments: SuiteKind.withFileSuite)
    func everyObserverOfAValueEndsOnTheLastValue(kind: SuiteKind) async throws {
        let key = Defaults.Key<Int>("count_manyTasks", default: 0, suite: kind.make())
        try await observeFromManyTasks(
            key, value: { $0 }, count: { $0 }
        )
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func everyObserverOfAClassEndsOnTheLastValue(kind: SuiteKind) async throws {
        let key = Defaults.Key<Tally>("counter_manyTasks", default: Tally(0), suite: kind.make())
        try await observeFromManyTasks(
            key, value: { Tally($0) }, count: { $0.count }
        )
    }

    /// Starts ``observers`` `observe` handlers and as many `updates` loops, each from its own task,
    /// while ``writes`` tasks write 1...``writes``; then writes the last value once more (a change
    /// unless it is already the value) and waits for every observer to be told it.
    private func observeFromManyTasks<Value: Defaults.Serializable & SendableMetatype>(
        _ key: Defaults.Key<Value>,
        value: @escaping @Sendable (Int) -> Value,
        count: @escaping @Sendable (Value) -> Int
    ) async throws {
        let last = Self.writes
        let recorder = LastCounts()
        var observations: [Defaults.Observation] = []
        var loopsThatSawLast = 0
        await withTaskGroup(of: Outcome.self) { group in
            for index in 0..<Self.observers {
                group.addTask {
                    .observing(
                        Defaults.observe(key) { change in
                            recorder.set(count(change.newValue), for: index)
                        })
                }
                group.addTask {
                    for await element in Defaults.updates(key) where count(element) == last {
                        return .sawLast
                    }
                    return .ended
                }
            }
            await withTaskGroup(of: Void.self) { writers in
                for number in 1...last {
                    writers.addTask { Defaults[key] = value(number) }
                }
            }
            Defaults[key] = value(last)
            for await outcome in group {
                switch outcome {
                case .observing(let observation): observations.append(observation)
                case .sawLast: loopsThatSawLast += 1
                case .ended: break
                }
            }
        }
        #expect(loopsThatSawLast == Self.observers)
        try await waitUntil("every observe handler was told the last value") {
            let counts = recorder.counts
            return counts.count == Self.observers && counts.values.allSatisfy { $0 == last }
        }
        #expect(count(Defaults[key]) == last)
        #expect(observations.count == Self.observers)
    }
}

/// What one observing task did.
private enum Outcome: Sendable {
    case observing(Defaults.Observation)
    case sawLast
    case ended
}

/// The count each observer was told last.
private final class LastCounts: Sendable {
    private let storage = Mutex<[Int: Int]>([:])

    var counts: [Int: Int] { storage.withLock { $0 } }

    func set(_ count: Int, for observer: Int) {
        storage.withLock { $0[observer] = count }
    }
}
