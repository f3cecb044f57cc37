import DefaultsSyncProtocol
import Synchronization

/// What each user may spend on this instance, over all their connections: how many connections
/// they hold (at most ``ServiceLimits/userConnections``) and one rate limit they share
/// (``ServiceLimits/messagesPerSecond``). A user's entry outlives their last connection until
/// their bucket has refilled, so that reconnecting does not refill it sooner.
final class UserBudgets: Sendable {
    private struct Budget {
        var connections = 0
        var limiter: RateLimiter
    }

    private struct State {
        var budgets: [String: Budget] = [:]
        var lastSweep = ContinuousClock.now
    }

    private let limits: ServiceLimits
    private let state = Mutex(State())

    init(limits: ServiceLimits) {
        self.limits = limits
    }

    /// Counts a new connection of `user`'s: `false` (and nothing counted) when they hold as many
    /// as they may.
    func admit(_ user: String) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            // Forgets, at most once a second, the users without connections whose bucket is full.
            if state.lastSweep.duration(to: now) > .seconds(1) {
                state.lastSweep = now
                state.budgets = state.budgets.filter { $0.value.connections > 0 || !$0.value.limiter.isFull(at: now) }
            }
            var budget =
                state.budgets[user]
                ?? Budget(
                    limiter: RateLimiter(
                        rate: limits.messagesPerSecond, burst: max(1, limits.messagesPerSecond * 2), now: now))
            guard budget.connections < limits.userConnections else { return false }
            budget.connections += 1
            state.budgets[user] = budget
            return true
        }
    }

    /// A connection `admit` counted has ended.
    func release(_ user: String) {
        state.withLock { state in
            state.budgets[user]?.connections -= 1
        }
    }

    /// Takes one message from `user`'s shared rate: `nil` when it may be answered, else how long
    /// until one may.
    func take(_ user: String) -> Duration? {
        let now = ContinuousClock.now
        return state.withLock { state in
            state.budgets[user]?.limiter.take(now: now)
        } ?? nil
    }

    /// The connections `user` holds.
    func connections(of user: String) -> Int {
        state.withLock { $0.budgets[user]?.connections ?? 0 }
    }
}
