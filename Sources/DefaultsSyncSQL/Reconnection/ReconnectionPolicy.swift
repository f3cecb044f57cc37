import Synchronization

/// When to connect again after a connection failed or ended: exponential back-off between
/// ``delays``, each wait jittered by ±20 % (``jitter``) so that many clients losing one server do
/// not all come back at once; a connection that stayed up ``settledAfter`` starts the back-off
/// over. `PostgresSyncStore` and the sync service's change listener both reconnect by it.
public struct ReconnectionPolicy: Sendable {
    /// The first and the longest wait; each failed attempt doubles the wait.
    public let delays: ClosedRange<Duration>
    /// How long a connection must have stayed up, from when it reported itself connected, for the
    /// next wait to be the first again.
    public let settledAfter: Duration

    /// What each wait is multiplied by, drawn afresh each time.
    public static let jitter: ClosedRange<Double> = 0.8...1.2

    public init(delays: ClosedRange<Duration>, settledAfter: Duration = .zero) {
        self.delays = delays
        self.settledAfter = settledAfter
    }

    /// Runs `connection` again and again, waiting between attempts, until `isStopped` says so
    /// (checked after each attempt and each wait). `connection` calls its argument once connected
    /// and returns or throws when the connection ends; `failed` is told each error unless stopped.
    public func run(
        until isStopped: @autoclosure () -> Bool,
        _ connection: (_ connected: @escaping @Sendable () -> Void) async throws -> Void,
        failed: (any Error) async -> Void
    ) async {
        var delay = delays.lowerBound
        while !isStopped() {
            let connectedAt = ConnectedAt()
            do {
                try await connection { connectedAt.mark() }
            } catch {
                guard !isStopped() else { break }
                await failed(error)
            }
            guard !isStopped() else { break }
            if let since = connectedAt.instant, since.duration(to: .now) >= settledAfter {
                delay = delays.lowerBound
            }
            try? await Task.sleep(for: delay * Double.random(in: Self.jitter))
            delay = min(delay * 2, delays.upperBound)
        }
    }
}

/// When one attempt's connection reported itself connected, if it did.
private final class ConnectedAt: Sendable {
    private let state = Mutex<ContinuousClock.Instant?>(nil)

    func mark() {
        state.withLock { $0 = $0 ?? .now }
    }

    var instant: ContinuousClock.Instant? { state.withLock { $0 } }
}
