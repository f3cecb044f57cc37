import Foundation

/// A token bucket: `rate` messages a second on average, bursts of up to `burst` (one per user:
/// ``UserBudgets``).
struct RateLimiter {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    init(rate: Double, burst: Double, now: ContinuousClock.Instant = .now) {
        self.rate = rate
        self.burst = burst
        tokens = burst
        last = now
    }

    /// Whether the bucket has refilled by `now`: forgetting it then loses nothing.
    func isFull(at now: ContinuousClock.Instant) -> Bool {
        let elapsed = last.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return tokens + seconds * rate >= burst
    }

    /// Takes one token: `nil` when there was one, else how long until there is.
    mutating func take(now: ContinuousClock.Instant = .now) -> Duration? {
        let elapsed = last.duration(to: now)
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + seconds * rate)
        guard tokens < 1 else {
            tokens -= 1
            return nil
        }
        return .milliseconds(Int(((1 - tokens) / rate * 1000).rounded(.up)))
    }
}
