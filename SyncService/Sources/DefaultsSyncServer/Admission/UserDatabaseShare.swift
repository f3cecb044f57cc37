/// A user's share of this instance's database pool: at most ``connections`` of its connections
/// serve one user's requests at once (every kind: pushes, pages, a device's welcome, the fan-out's
/// fetches for their devices), so that a user at every other limit leaves the rest of the pool to
/// the others. Their requests past it wait in order, at most ``maximumWaiting`` of them: one more
/// is refused (``Refusal``), to be asked again after ``retryAfter``.
struct UserDatabaseShare: Sendable {
    /// Why a request was refused: as many of the user's requests wait as may.
    struct Refusal: Error, CustomStringConvertible {
        let connections: Int
        let waiting: Int

        var description: String {
            "\(waiting) requests of the user wait for their share of the database (\(connections) connections)"
        }
    }

    /// How long a refused request waits before it is asked again.
    static let retryAfter = Duration.seconds(1)

    let connections: Int
    let maximumWaiting: Int
    private let permits: KeyedPermits<String>

    /// `connections` of the pool's for each user, and as many waiting requests as the connections a
    /// user may hold (`userConnections`): each asks one thing at a time, so only what comes on top
    /// (the fan-out's fetches for many namespaces at once) is ever refused.
    init(connections: Int, userConnections: Int) {
        self.connections = max(1, connections)
        maximumWaiting = max(1, userConnections)
        permits = KeyedPermits(permits: self.connections, maximumWaiting: maximumWaiting)
    }

    /// Runs `request` holding one of `user`'s share, waiting for it first if need be; throws
    /// ``Refusal`` without running it when as many of the user's requests wait as may.
    func withConnection<Value>(of user: String, _ request: () async throws -> Value) async throws -> Value {
        do {
            return try await permits.withPermit(for: user, request)
        } catch is KeyedPermits<String>.Full {
            throw Refusal(connections: connections, waiting: maximumWaiting)
        }
    }

    /// The connections `user`'s requests hold now.
    func held(by user: String) -> Int { permits.holders(of: user) }

    /// The requests of `user`'s waiting for their share now.
    func waiting(of user: String) -> Int { permits.waiters(for: user) }
}
