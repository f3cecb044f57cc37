import DefaultsSyncProtocol
import Synchronization
import Testing

/// The one reconnection policy of `PostgresSyncStore`, the sync service's change listener and
/// `SyncServiceStore`: the wait doubles up to the longest, a connection that stayed up starts it
/// over, a failure may ask for the longest at once or for a wait of at least some duration, every
/// attempt after the first comes after a wait, and the loop stops when asked. The waits are read from the policy (its `sleep` replaced)
/// and the time a connection stays up is told to it (its `now` replaced), never timed.
struct ReconnectionPolicyTests {
    private let policy = ReconnectionPolicy(delays: .milliseconds(10)...(.milliseconds(80)))

    @Test func theWaitDoublesUpToTheLongestAndStaysThere() async {
        let waits = await Self.waits(of: policy, over: Array(repeating: .fails, count: 7))
        #expect(Self.steps(of: waits, in: policy) == [10, 20, 40, 80, 80, 80])
    }

    @Test func aConnectionThatStayedUpStartsTheBackOffOver() async {
        let policy = ReconnectionPolicy(delays: policy.delays, settledAfter: .seconds(1))
        let waits = await Self.waits(
            of: policy,
            over: [
                .fails, .fails, .fails,
                // Connected, then up for as long as the policy asks: the next wait is the first.
                Attempt(connects: true, staysUp: .seconds(1)), .fails,
                // As long, but never connected: the back-off goes on.
                Attempt(staysUp: .seconds(1)),
                // Connected, but lost at once: the back-off goes on too.
                Attempt(connects: true),
                // Connected, but lost just before the policy asks: the back-off goes on too.
                Attempt(connects: true, staysUp: .seconds(1) - .nanoseconds(1)),
                // As long before connecting, then lost at once: the time up counts from connecting.
                Attempt(connectsAfter: .seconds(1), connects: true),
                .fails,
            ])
        #expect(Self.steps(of: waits, in: policy) == [10, 20, 40, 10, 20, 40, 80, 80, 80])
    }

    @Test func aFailureThatAsksForTheLongestWaitGetsItUntilAConnectionStaysUp() async {
        // Every connection counts as one that stayed up.
        let policy = ReconnectionPolicy(delays: policy.delays, settledAfter: .zero)
        let waits = await Self.waits(
            of: policy,
            over: [
                .fails,
                Attempt(asksLongest: true),
                // A failure asking nothing after it: still the longest.
                .fails,
                // A connection that stayed up starts over...
                Attempt(connects: true),
                // ...unless its failure asks for the longest.
                Attempt(connects: true, asksLongest: true),
                .fails,
            ])
        #expect(Self.steps(of: waits, in: policy) == [10, 80, 80, 10, 80])
    }

    @Test func aFailureThatAsksForAMinimumWaitNeverWaitsLess() async {
        // The server's "retry after 5 s", far over the back-off; then one under it.
        let waits = await Self.waits(
            of: policy,
            over: [
                .fails, Attempt(asksAtLeast: .seconds(5)), .fails, Attempt(asksAtLeast: .milliseconds(1)), .fails,
            ])
        #expect(waits.count == 4)
        // At least the wait asked for, jittered upward only.
        #expect((Duration.seconds(5)...(.seconds(5) * ReconnectionPolicy.jitter.upperBound)).contains(waits[1]))
        // The back-off goes on around it, and a minimum under the back-off's wait changes nothing.
        #expect(Self.steps(of: [waits[0]] + waits[2...], in: policy) == [10, 40, 80])
        // Jittered upward only, every time.
        let asked = await Self.waits(of: policy, over: Array(repeating: Attempt(asksAtLeast: .seconds(1)), count: 50))
        #expect(asked.allSatisfy { (.seconds(1)...(.seconds(1) * ReconnectionPolicy.jitter.upperBound)).contains($0) })
    }

    @Test func itStopsWhenAsked() async {
        // Stopped while an attempt fails: the failure is not reported, nothing is waited.
        var counts = await Self.run(policy) { stop in
            stop()
            throw CancellationError()
        }
        #expect(counts == Counts(attempts: 1, failures: 0, waits: 0))
        // Stopped while the failure is reported: nothing is waited.
        counts = await Self.run(policy, stoppingWhenFailed: true) { _ in throw CancellationError() }
        #expect(counts == Counts(attempts: 1, failures: 1, waits: 0))
        // Stopped during a wait: no attempt after it.
        counts = await Self.run(policy, stoppingWhileWaiting: true) { _ in throw CancellationError() }
        #expect(counts == Counts(attempts: 1, failures: 1, waits: 1))
        // A connection that ends without an error is made again too, with no failure reported.
        var ended = 0
        counts = await Self.run(policy) { stop in
            ended += 1
            if ended == 3 { stop() }
        }
        #expect(counts == Counts(attempts: 3, failures: 0, waits: 2))
    }

    @Test func everyAttemptAfterTheFirstComesAfterAWait() async {
        // Failing, ending without an error, connected and lost: each is followed by a wait, which
        // the policy awaits to its end before the next attempt; no wait comes before the first
        // attempt, nor after the last, which stops the policy.
        enum Event: Equatable {
            case attempt, waitStarted, waitEnded
        }
        var policy = policy
        let events = Mutex<[Event]>([])
        policy.sleep = { _ in
            events.withLock { $0.append(.waitStarted) }
            await Task.yield()
            events.withLock { $0.append(.waitEnded) }
        }
        var started = 0
        await policy.run(until: started == 4) { connected in
            events.withLock { $0.append(.attempt) }
            started += 1
            switch started {
            case 2: return
            case 3: connected()
            default: break
            }
            throw CancellationError()
        } failed: { _ in
        }
        let afterAWait: [Event] = [.waitStarted, .waitEnded, .attempt]
        #expect(events.withLock { $0 } == [.attempt] + afterAWait + afterAWait + afterAWait)
    }

    // MARK: Helpers

    /// What one attempt does before it fails.
    private struct Attempt {
        /// How long it takes before it reports itself connected, if it does.
        var connectsAfter: Duration = .zero
        /// Whether it reports itself connected.
        var connects = false
        /// How long it stays up then (or, not connected, after `connectsAfter`).
        var staysUp: Duration = .zero
        /// Whether its failure asks for the longest wait.
        var asksLongest = false
        /// The least wait its failure asks for, if any.
        var asksAtLeast: Duration?

        static let fails = Attempt()
    }

    private struct AttemptFailed: Error {
        let nextWait: ReconnectionPolicy.NextWait
    }

    /// The waits `policy` asks for between `attempts`, stopping after the last. The policy's clock
    /// moves only as the attempts say they take time, and its waits take none.
    private static func waits(of policy: ReconnectionPolicy, over attempts: [Attempt]) async -> [Duration] {
        var policy = policy
        let waits = Mutex<[Duration]>([])
        let now = Mutex(ContinuousClock.now)
        policy.sleep = { wait in waits.withLock { $0.append(wait) } }
        policy.now = { now.withLock { $0 } }
        var started = 0
        await policy.run(until: started == attempts.count) { connected in
            let attempt = attempts[started]
            started += 1
            now.withLock { $0 += attempt.connectsAfter }
            if attempt.connects { connected() }
            now.withLock { $0 += attempt.staysUp }
            throw AttemptFailed(
                nextWait: attempt.asksLongest ? .longest : attempt.asksAtLeast.map { .atLeast($0) } ?? .backOff)
        } nextWaitAfter: { error in
            (error as? AttemptFailed)?.nextWait ?? .backOff
        }
        return waits.withLock { $0 }
    }

    /// Each wait as the milliseconds of the back-off step it jitters (`nil` for none): the steps'
    /// jittered ranges do not overlap, as each doubles the one before.
    private static func steps(of waits: [Duration], in policy: ReconnectionPolicy) -> [Int?] {
        var steps = [policy.delays.lowerBound]
        while steps.last! < policy.delays.upperBound {
            steps.append(min(steps.last! * 2, policy.delays.upperBound))
        }
        let jitter = ReconnectionPolicy.jitter
        return waits.map { wait in
            steps.first { step in
                (jitter.lowerBound - 1e-9...jitter.upperBound + 1e-9).contains(wait / step)
            }.map { Int($0 / .milliseconds(1)) }
        }
    }

    private struct Counts: Equatable {
        var attempts = 0
        var failures = 0
        var waits = 0
    }

    /// Runs `policy` until `connection`, or a failure or a wait as asked, stops it.
    private static func run(
        _ policy: ReconnectionPolicy, stoppingWhenFailed: Bool = false, stoppingWhileWaiting: Bool = false,
        _ connection: (_ stop: () -> Void) async throws -> Void
    ) async -> Counts {
        var policy = policy
        let isStopped = Mutex(false)
        let counts = Mutex(Counts())
        policy.sleep = { _ in
            counts.withLock { $0.waits += 1 }
            if stoppingWhileWaiting { isStopped.withLock { $0 = true } }
        }
        // The form whose failures ask for nothing, as `PostgresSyncStore` and the change listener
        // call it.
        await policy.run(until: isStopped.withLock { $0 }) { _ in
            counts.withLock { $0.attempts += 1 }
            try await connection { isStopped.withLock { $0 = true } }
        } failed: { _ in
            counts.withLock { $0.failures += 1 }
            if stoppingWhenFailed { isStopped.withLock { $0 = true } }
        }
        return counts.withLock { $0 }
    }
}
