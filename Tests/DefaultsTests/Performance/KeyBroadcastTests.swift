import Defaults
import Foundation
import Synchronization
import Testing

/// Observers of one key share one read and decode per change; each still gets every change once,
/// in order, never two at a time, with `old` the previous `new`.
@Suite("Key broadcast")
struct KeyBroadcastTests {
    /// What one observer was told, checked as it comes.
    final class Log: Sendable {
        private struct State {
            var changes: [Defaults.KeyChange<Int>] = []
            var isInside = false
            var problems: [String] = []
        }

        private let state = Mutex(State())

        func record(_ change: Defaults.KeyChange<Int>) {
            state.withLock { state in
                if state.isInside { state.problems.append("two deliveries at once") }
                state.isInside = true
                if let previous = state.changes.last, previous.newValue != change.oldValue {
                    state.problems.append("old \(change.oldValue) after new \(previous.newValue)")
                }
                if change.isInitial, !state.changes.isEmpty { state.problems.append("initial after a change") }
                state.changes.append(change)
            }
            state.withLock { $0.isInside = false }
        }

        var values: [Int] { state.withLock { $0.changes.map(\.newValue) } }
        var problems: [String] { state.withLock { $0.problems } }
    }

    final class Logs: Sendable {
        let list = Mutex<[Log]>([])
    }

    @Test func aThousandObserversEachGetEveryChangeOnce() {
        let suite = InMemorySuite()
        let key = Defaults.Key<Int>("shared", default: 0, suite: suite)
        let logs = (0..<1_000).map { _ in Log() }
        let observations = logs.map { log in Defaults.observe(key, options: [.initial]) { log.record($0) } }
        for value in 1...5 {
            Defaults[key] = value
        }
        Defaults[key] = 5  // not a change
        for log in logs {
            #expect(log.values == [0, 1, 2, 3, 4, 5])
            #expect(log.problems.isEmpty)
        }
        for observation in observations { observation.invalidate() }
        #expect(suite.changes.observerCount == 0)
        Defaults[key] = 6
        #expect(logs.allSatisfy { $0.values.last == 5 })
    }

    /// An observer added from inside another's handler starts from the value that handler was
    /// told about, and goes on from there.
    @Test func anObserverJoiningInsideAHandlerStaysConsistent() {
        let suite = InMemorySuite()
        let key = Defaults.Key<Int>("joined", default: 0, suite: suite)
        let first = Log()
        let late = Log()
        let lateObservation = Mutex<Defaults.Observation?>(nil)
        let observation = Defaults.observe(key, options: []) { change in
            first.record(change)
            if change.newValue == 1 {
                lateObservation.withLock { $0 = Defaults.observe(key, options: [.initial]) { late.record($0) } }
                Defaults[key] = 2  // made inside the delivery: queued, delivered after it
            }
        }
        Defaults[key] = 1
        Defaults[key] = 3
        #expect(first.values == [1, 2, 3])
        #expect(late.values == [1, 2, 3])
        #expect(first.problems.isEmpty)
        #expect(late.problems.isEmpty)
        observation.invalidate()
        lateObservation.withLock { $0?.invalidate() }
        #expect(suite.changes.observerCount == 0)
    }

    @Test func anObserverThatLeavesInsideItsHandlerIsNotCalledAgain() {
        let suite = InMemorySuite()
        let key = Defaults.Key<Int>("leaving", default: 0, suite: suite)
        let log = Log()
        let other = Log()
        let observation = Mutex<Defaults.Observation?>(nil)
        observation.withLock { slot in
            slot = Defaults.observe(key, options: []) { change in
                log.record(change)
                observation.withLock { $0?.invalidate() }
            }
        }
        let otherObservation = Defaults.observe(key, options: []) { other.record($0) }
        Defaults[key] = 1
        Defaults[key] = 2
        #expect(log.values == [1])
        #expect(other.values == [1, 2])
        otherObservation.invalidate()
    }

    /// Writers and observers that come and go on several threads: every observer's series is
    /// consistent, and the ones there at the end saw the last value.
    @Test func concurrentWritersAndObserversStayConsistent() async {
        let suite = InMemorySuite()
        let key = Defaults.Key<Int>("busy", default: 0, suite: suite)
        let steady = (0..<20).map { _ in Log() }
        let observations = steady.map { log in Defaults.observe(key, options: [.initial]) { log.record($0) } }
        let churned = Logs()
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    for step in 1...500 {
                        Defaults[key] = writer * 10_000 + step
                    }
                }
            }
            group.addTask {
                for _ in 0..<100 {
                    let log = Log()
                    churned.list.withLock { $0.append(log) }
                    let observation = Defaults.observe(key, options: [.initial]) { log.record($0) }
                    observation.invalidate()
                }
            }
        }
        Defaults[key] = -1
        for log in steady {
            #expect(log.problems.isEmpty)
            #expect(log.values.last == -1)
        }
        for log in churned.list.withLock({ $0 }) {
            #expect(log.problems.isEmpty)
            #expect(log.values.first != nil)
        }
        for observation in observations { observation.invalidate() }
        #expect(suite.changes.observerCount == 0)
    }
}
