import Synchronization

/// When to connect again after a connection failed or ended: exponential back-off between
/// ``delays``, each wait jittered by ±20 % (``jitter``) so that many clients losing one server do
/// not all come back at once; a connection that stayed up ``settledAfter`` starts the back-off
/// over, and a failure may ask for the longest wait at once (the sync service's client, given again
/// the very token the server refused last: only a new one helps) or for a wait of at least some
/// duration (the sync service's client, told by the server to retry after it).
///
/// All three reconnection loops use it: `PostgresSyncStore`, the sync service's change listener
/// and the sync service's client (`SyncServiceStore`). It lives here, with the messages, because
/// the client links neither PostgreSQL nor the SQL layer.
public struct ReconnectionPolicy: Sendable {
    /// The first and the longest wait; each failed attempt doubles the wait.
    public let delays: ClosedRange<Duration>
    /// How long a connection must have stayed up, from when it reported itself connected, for the
    /// next wait to be the first again (unless its failure asks for the longest).
    public let settledAfter: Duration
    /// Waits the given (jittered) duration, or less if the task is cancelled: `Task.sleep`, which
    /// tests replace to see the waits without waiting.
    package var sleep: @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    /// The clock by which a connection's time up is measured, against ``settledAfter``: the
    /// continuous clock's `now`, which tests replace to say how long a connection stayed up
    /// without its staying up.
    package var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

    /// What each wait is multiplied by, drawn afresh each time.
    public static let jitter: ClosedRange<Double> = 0.8...1.2

    public init(delays: ClosedRange<Duration>, settledAfter: Duration = .zero) {
        self.delays = delays
        self.settledAfter = settledAfter
    }

    /// What a failure asks of the next wait.
    public enum NextWait: Sendable, Equatable {
        /// The back-off's next wait.
        case backOff
        /// The longest wait, and the waits after it too until a connection stays up
        /// ``ReconnectionPolicy/settledAfter``.
        case longest
        /// The back-off's next wait, but never less than this: the jitter only lengthens it.
        case atLeast(Duration)
    }

    /// Runs `connection` again and again, waiting between attempts, until `isStopped` says so
    /// (checked after each attempt and each wait). `connection` calls its argument once connected
    /// and returns or throws when the connection ends; `failed` is told each error unless stopped.
    public func run(
        until isStopped: @autoclosure () -> Bool,
        _ connection: (_ connected: @escaping @Sendable () -> Void) async throws -> Void,
        failed: (any Error) async -> Void
    ) async {
        await run(until: isStopped(), connection) { error in
            await failed(error)
            return .backOff
        }
    }

    /// Runs `connection` as ``run(until:_:failed:)`` does; `waitsLongestAfter` is told each error
    /// unless stopped, and returns whether the next wait is the longest.
    @available(*, deprecated, renamed: "run(until:_:nextWaitAfter:)")
    public func run(
        until isStopped: @autoclosure () -> Bool,
        _ connection: (_ connected: @escaping @Sendable () -> Void) async throws -> Void,
        waitsLongestAfter failed: (any Error) async -> Bool
    ) async {
        await run(until: isStopped(), connection) { error in await failed(error) ? .longest : .backOff }
    }

    /// Runs `connection` as ``run(until:_:failed:)`` does; `nextWaitAfter` is told each error
    /// unless stopped, and returns what the next wait must be (``NextWait``).
    public func run(
        until isStopped: @autoclosure () -> Bool,
        _ connection: (_ connected: @escaping @Sendable () -> Void) async throws -> Void,
        nextWaitAfter failed: (any Error) async -> NextWait
    ) async {
        var delay = delays.lowerBound
        while !isStopped() {
            let connectedAt = ConnectedAt(clock: now)
            var next = NextWait.backOff
            do {
                try await connection { connectedAt.mark() }
            } catch {
                guard !isStopped() else { break }
                next = await failed(error)
            }
            guard !isStopped() else { break }
            if next == .longest {
                delay = delays.upperBound
            } else if let since = connectedAt.instant, since.duration(to: now()) >= settledAfter {
                delay = delays.lowerBound
            }
            var wait = delay * Double.random(in: Self.jitter)
            if case .atLeast(let minimum) = next {
                wait = max(wait, minimum * Double.random(in: 1...Self.jitter.upperBound))
            }
            await sleep(wait)
            delay = min(delay * 2, delays.upperBound)
        }
    }
}

/// When one attempt's connection first reported itself connected, by `clock`, if it did.
private final class ConnectedAt: Sendable {
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex<ContinuousClock.Instant?>(nil)

    init(clock: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.clock = clock
    }

    func mark() {
        let now = clock()
        state.withLock { $0 = $0 ?? now }
    }

    var instant: ContinuousClock.Instant? { state.withLock { $0 } }
}
