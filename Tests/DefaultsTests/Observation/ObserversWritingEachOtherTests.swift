import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

extension ObservationTests {
    /// An observer of `a` that writes `b`, and one of `b` that writes `a`, while two threads write
    /// both: every setter returns, the observers see the latest values, and the series ends (it
    /// used to replay every intermediate value at the other observer, for ever, at full CPU).
    @Suite struct ObserversWritingEachOtherTests {
        @Test(.timeLimit(.minutes(2)), arguments: ObservedSuiteKind.allCases)
        func theSeriesEndsAndEverySetterReturns(_ kind: ObservedSuiteKind) async throws {
            let suite = kind.make()
            let a = Defaults.Key<Int>("a", default: 0, suite: suite)
            let b = Defaults.Key<Int>("b", default: 0, suite: suite)
            let calls = Atomic(0)
            let toB = Defaults.observe(a, options: []) { change in
                calls.add(1, ordering: .relaxed)
                Defaults[b] = change.newValue
            }
            let toA = Defaults.observe(b, options: []) { change in
                calls.add(1, ordering: .relaxed)
                Defaults[a] = change.newValue
            }
            defer {
                toB.invalidate()
                toA.invalidate()
            }
            let finished = Atomic(0)
            for (key, sign) in [(a, 1), (b, -1)] {
                Thread {
                    for index in 1...2_000 {
                        Defaults[key] = sign * index
                    }
                    finished.add(1, ordering: .releasing)
                }.start()
            }
            try await waitUntil("both writers to return") { finished.load(ordering: .acquiring) == 2 }
            // Then the observers settle on one value for both keys, and stop being called.
            try await waitUntil("the observers to agree") { Defaults[a] == Defaults[b] }
            var settled = calls.load(ordering: .relaxed)
            try await waitUntil("the observers to stop being called") {
                let now = calls.load(ordering: .relaxed)
                defer { settled = now }
                return now == settled && Defaults[a] == Defaults[b]
            }
        }
    }
}
