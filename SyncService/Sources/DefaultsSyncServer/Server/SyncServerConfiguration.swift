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

    public init(databaseURL: String, tokenKeyFiles: [String]) {
        self.databaseURL = databaseURL
        self.tokenKeyFiles = tokenKeyFiles
    }
}
