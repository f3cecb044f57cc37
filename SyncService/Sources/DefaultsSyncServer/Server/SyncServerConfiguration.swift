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
    /// The file holding the key tokens are signed with (at least 32 random bytes).
    public var tokenKeyFile: String
    /// The quotas and limits.
    public var limits = ServiceLimits.standard
    /// A device that answers no ping within this time is disconnected.
    public var pingInterval = Duration.seconds(30)
    /// A connection that sends no request for this long before it becomes a WebSocket is closed
    /// (after that, the pings judge it).
    public var idleTimeout = Duration.seconds(30)
    /// The PEM certificate chain and private key, to serve `wss://` directly (else put a TLS proxy
    /// in front).
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?
    /// The most database connections this instance opens.
    public var databaseConnections = 20

    public init(databaseURL: String, tokenKeyFile: String) {
        self.databaseURL = databaseURL
        self.tokenKeyFile = tokenKeyFile
    }
}
