import DefaultsSyncProtocol
import Synchronization

/// Admits each user's costly requests of one kind at a bounded rate of bytes, on this instance:
/// ``bytesPerSecond`` on average, up to ``burstBytes`` at once. The server keeps one for reads
/// (`stamps`, `records` and `changes`, charged their answers, which can be as large as the
/// namespace) and one for pushes (charged what they fan out: their records once for each of the
/// owner's devices connected to the instance). A request waits, holding nothing shared (no pooled connection), while the
/// user's account is overdrawn; it is charged, as it is admitted, what the user's last request of
/// the kind cost, and then what its own cost. So a user whose devices ask for large pages, or push
/// large batches to many devices, again and again is answered a few a second, and a storm of them
/// costs the others little; a device catching up on a namespace is answered at once.
final class BytesBudget: Sendable {
    private struct Account {
        var balance: Double
        var last: ContinuousClock.Instant
        /// What the user's last request of the kind cost: charged to the next as it is admitted,
        /// so that requests waiting together do not all pass together.
        var estimate = 0
    }

    private struct State {
        var accounts: [String: Account] = [:]
        var lastSweep: ContinuousClock.Instant
    }

    let bytesPerSecond: Double
    let burstBytes: Double
    private let state: Mutex<State>

    /// `bytesPerSecond` for each user, and four seconds of it at once.
    init(bytesPerSecond: Int, now: ContinuousClock.Instant = .now) {
        self.bytesPerSecond = Double(max(1, bytesPerSecond))
        burstBytes = self.bytesPerSecond * 4
        state = Mutex(State(lastSweep: now))
    }

    /// Runs `request` once `user`'s account allows it, and charges it `cost` of its outcome.
    func withAdmission<Value>(
        of user: String, _ request: () async throws -> Value, cost: (Value) -> Int
    ) async throws -> Value {
        var admitted: Int?
        while admitted == nil {
            switch admit(user) {
            case .admitted(let estimate): admitted = estimate
            case .wait(let wait): try await Task.sleep(for: wait)
            }
        }
        let estimate = admitted ?? 0
        do {
            let value = try await request()
            settle(user, estimate: estimate, cost: cost(value))
            return value
        } catch {
            settle(user, estimate: estimate, cost: 0)
            throw error
        }
    }

    enum Admission: Equatable {
        /// Admitted, and charged this much on account.
        case admitted(estimate: Int)
        /// Overdrawn: to be asked again after this long.
        case wait(Duration)
    }

    /// Admits one request of `user`'s at `now` (charging it the estimate), or says how long until
    /// the account allows one.
    func admit(_ user: String, now: ContinuousClock.Instant = .now) -> Admission {
        state.withLock { state in
            // Forgets, at most once a second, the accounts refilled to the full burst.
            if state.lastSweep.duration(to: now) > .seconds(1) {
                state.lastSweep = now
                state.accounts = state.accounts.filter { refilled($0.value, at: now).balance < burstBytes }
            }
            var account = refilled(state.accounts[user] ?? Account(balance: burstBytes, last: now), at: now)
            guard account.balance >= 0 else {
                state.accounts[user] = account
                return .wait(.milliseconds(Int((-account.balance / bytesPerSecond * 1000).rounded(.up)) + 1))
            }
            account.balance -= Double(account.estimate)
            state.accounts[user] = account
            return .admitted(estimate: account.estimate)
        }
    }

    /// Charges an admitted request its `cost` instead of the `estimate` it was charged.
    func settle(_ user: String, estimate: Int, cost: Int, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            var account = refilled(state.accounts[user] ?? Account(balance: burstBytes, last: now), at: now)
            account.balance += Double(estimate - cost)
            account.estimate = cost
            state.accounts[user] = account
        }
    }

    private func refilled(_ account: Account, at now: ContinuousClock.Instant) -> Account {
        var account = account
        let elapsed = account.last.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        account.balance = min(burstBytes, account.balance + max(0, seconds) * bytesPerSecond)
        account.last = max(account.last, now)
        return account
    }

    /// What answering `records` costs: the bytes the server stores for them (``Usage``'s count).
    static func cost(of records: [WireRecord]) -> Int {
        records.reduce(0) { $0 + Usage.bytes(of: $1) }
    }

    /// What answering `stamps` costs: each one's key and origin, and its two numbers.
    static func cost(of stamps: [WireStamp]) -> Int {
        stamps.reduce(0) { $0 + $1.key.utf8.count + $1.origin.utf8.count + 16 }
    }
}
