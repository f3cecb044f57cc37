import DefaultsSyncProtocol
import Synchronization

/// Remembers, for a while, the devices this instance closed as slow consumers and their users,
/// and tells them how long to wait before connecting again: a device that asks for large answers,
/// never reads them and connects again at once would otherwise cost the instance those answers
/// again and again.
///
/// A device is known by its token's claims (a device keeps its token while it is valid). Its first
/// close as a slow consumer asks it to wait ``BackOff/first``; each further offence, a close or a
/// connection before its wait is over, doubles the wait, counted from its last close, up to
/// ``BackOff/longest``. Its user is remembered the same way, over all their devices, beyond the
/// first ``userAllowance`` closes: then every device of the user waits, whatever token it brings.
/// A device or user is forgotten once ``BackOff/forgottenAfter`` has passed since its wait ended
/// without a new offence.
final class ReconnectionAdmission: Sendable {
    /// The waits asked of a device closed as a slow consumer.
    struct BackOff: Sendable {
        /// The wait after a first close.
        var first: Duration
        /// The longest wait.
        var longest: Duration
        /// How long past its wait a device or user must go without offence to be forgotten.
        var forgottenAfter = Duration.seconds(60)
    }

    /// The closes of a user's devices within the memory that cost only each device its wait.
    static let userAllowance = 3

    private struct Offences {
        var count: Int
        /// The last close as a slow consumer, from which the wait counts.
        var closedAt: ContinuousClock.Instant
        var until: ContinuousClock.Instant
    }

    private struct State {
        var devices: [TokenClaims: Offences] = [:]
        var users: [String: Offences] = [:]
        var lastSweep: ContinuousClock.Instant
    }

    let backOff: BackOff
    private let state: Mutex<State>

    init(backOff: BackOff, now: ContinuousClock.Instant = .now) {
        self.backOff = backOff
        state = Mutex(State(lastSweep: now))
    }

    /// Records that the device of `claims` was closed as a slow consumer, and returns how long it
    /// is to wait before it connects again.
    func closedAsSlowConsumer(_ claims: TokenClaims, now: ContinuousClock.Instant = .now) -> Duration {
        state.withLock { state in
            sweep(&state, now: now)
            let device = offence(after: state.devices[claims], closedAt: now, allowance: 0)
            let user = offence(after: state.users[claims.user], closedAt: now, allowance: Self.userAllowance)
            state.devices[claims] = device
            state.users[claims.user] = user
            return max(device.until, user.until) - now
        }
    }

    /// How long the device of `claims` is still to wait before it connects, `nil` when it may
    /// connect now. A connection that comes before the wait is over counts as an offence: the wait
    /// it is told is longer than the last.
    func refusal(of claims: TokenClaims, now: ContinuousClock.Instant = .now) -> Duration? {
        state.withLock { state in
            sweep(&state, now: now)
            var until: ContinuousClock.Instant?
            if let device = state.devices[claims], device.until > now {
                let offences = offence(after: device, closedAt: device.closedAt, allowance: 0)
                state.devices[claims] = offences
                until = offences.until
            }
            if let user = state.users[claims.user], user.until > now {
                let offences = offence(after: user, closedAt: user.closedAt, allowance: Self.userAllowance)
                state.users[claims.user] = offences
                until = max(until ?? offences.until, offences.until)
            }
            return until.map { $0 - now }
        }
    }

    /// `known` and one more offence, the wait counted from the close at `closedAt`; the first
    /// `allowance` offences ask for no wait.
    private func offence(after known: Offences?, closedAt: ContinuousClock.Instant, allowance: Int) -> Offences {
        let count = (known?.count ?? 0) + 1
        return Offences(count: count, closedAt: closedAt, until: closedAt + wait(after: count - allowance))
    }

    /// The wait after `offences` (none for none): the first, doubled for each more, at most the
    /// longest.
    private func wait(after offences: Int) -> Duration {
        guard offences > 0 else { return .zero }
        var wait = backOff.first
        for _ in 1..<min(offences, 32) where wait < backOff.longest { wait *= 2 }
        return min(wait, backOff.longest)
    }

    /// Forgets, at most once a second, the devices and users past their wait and the memory.
    private func sweep(_ state: inout State, now: ContinuousClock.Instant) {
        guard state.lastSweep.duration(to: now) > .seconds(1) else { return }
        state.lastSweep = now
        let forgottenAfter = backOff.forgottenAfter
        state.devices = state.devices.filter { $0.value.until + forgottenAfter > now }
        state.users = state.users.filter { $0.value.until + forgottenAfter > now }
    }
}
