import DefaultsSyncProtocol
import Foundation

/// How `defaults-sync-server serve` runs.
public struct SyncServerConfiguration: Sendable {
    /// The address to listen on (`127.0.0.1`; `0.0.0.0` for every interface).
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (the server prints which).
    public var port = 8080
    /// `postgres://user:password@host:port/database?sslmode=...`; the role should not be a
    /// superuser, so that row-level security holds it too.
    public var databaseURL: String
    /// The files of the keys tokens are signed with (each at least 32 random bytes, named
    /// `<kid>.key`); the first also verifies tokens that name no key.
    public var tokenKeyFiles: [String]
    /// What tokens must satisfy beyond their signature: leeway, lifetime, issuer, audience.
    public var tokenPolicy = TokenPolicy()
    /// The quotas and limits.
    public var limits = ServiceLimits.standard
    /// A device that answers no ping within this time is disconnected.
    public var pingInterval = Duration.seconds(30)
    /// A connection that has not completed its request (the WebSocket upgrade, or an HTTP request
    /// answered) this long after it opened, or after its last response, is closed, whatever it
    /// sends (after the upgrade, the pings and the outbox judge it).
    public var idleTimeout = Duration.seconds(30)
    /// The PEM certificate chain and private key, to serve `wss://` directly (else put a TLS proxy
    /// in front).
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?
    /// The most database connections this instance opens.
    public var databaseConnections = 20
    /// The most of them one user's requests hold at once (every kind: pushes, pages, welcomes, the
    /// fan-out's fetches for their devices), so that a user at every other limit leaves the rest to
    /// the others; `nil`, the default: a quarter of ``databaseConnections``
    /// (``userDatabaseShare``). The user's requests past it wait in order, as many as the
    /// connections a user may hold; one more is refused as rate limited, to be asked again after a
    /// second.
    public var userDatabaseConnections: Int?
    /// Bytes a second of answers to one user's reads (`stamps`, `records`, `changes`) on this
    /// instance, on average, and four seconds of it at once: a read waits, holding no database
    /// connection, while the user has read more. A device catching up on a namespace is answered at
    /// once; one that asks for large pages again and again, a few pages a second.
    public var userReadBytesPerSecond = 2_097_152
    /// Bytes a second of what one user's pushes fan out on this instance (each push's records once
    /// for each of its namespace's devices connected here), on average, and four seconds of it at once: a
    /// push waits, holding no database connection, while the user has pushed more. A device's
    /// ordinary writes pass at once; a user pushing large batches to many devices without end is
    /// answered a few batches a second, and the others' deliveries stay quick.
    public var userPushBytesPerSecond = 2_097_152
    /// How long a device closed as a slow consumer is asked to wait before it connects again (in its
    /// close frame, `retry after N s`): the lower bound after a first close, doubled for each more
    /// (a close, or a connection before the wait is over, which is refused as `try again later`),
    /// up to the upper bound. Beyond three closes of a user's devices, every device of the user
    /// waits too. Forgotten a minute after the wait ends without a new offence.
    public var slowConsumerBackOff: ClosedRange<Duration> = .seconds(5)...(.seconds(300))

    /// The database connections one user's requests may hold at once: ``userDatabaseConnections``,
    /// or a quarter of ``databaseConnections``; at least 1 and at most ``databaseConnections``.
    public var userDatabaseShare: Int {
        max(1, min(databaseConnections, userDatabaseConnections ?? databaseConnections / 4))
    }
    /// The address of the metrics listener, which serves `GET /metrics` for Prometheus apart from
    /// the devices' port (loopback by default: the page is not for the world).
    public var metricsHost = "127.0.0.1"
    /// The port of the metrics listener (0 picks a free one); `nil`, the default, serves no
    /// metrics.
    public var metricsPort: Int?
    /// While more than this many bytes wait to be sent to one device, its messages are not read;
    /// see ``DeviceOutbox``.
    public var outboxBytes = 524_288
    /// A device whose connection takes nothing of what waits for it for this long is closed as a
    /// slow consumer.
    public var slowConsumerTimeout = Duration.seconds(10)

    /// The most device connections arriving at once (their token verified, their device
    /// registered, their welcome queued), spread over the instance's event loops, a user's devices
    /// a quarter of them; the others wait, unread, each user's in order and the users in turn
    /// (``ArrivalGate``). `nil`, the default: 16 for each event loop, one loop per core. What an
    /// arrival allocates for a moment, ten thousand devices reconnecting at once would otherwise
    /// hold together, leaving the allocator that much larger.
    public var arrivingConnections: Int?

    /// The most connections arriving at once on each of `loops` event loops: ``arrivingConnections``
    /// spread over them (rounded up), or 16.
    func arrivingConnections(perLoopOf loops: Int) -> Int {
        guard let arrivingConnections else { return 16 }
        return max(1, (arrivingConnections + loops - 1) / max(1, loops))
    }

    public init(databaseURL: String, tokenKeyFiles: [String]) {
        self.databaseURL = databaseURL
        self.tokenKeyFiles = tokenKeyFiles
    }
}
