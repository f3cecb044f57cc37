import Foundation
import PostgresNIO

extension PostgresSyncStore {
    /// Reads a connection URL, `postgres://user:password@host:port/database?sslmode=...`: see
    /// ``PostgresURL`` for TLS (`sslmode`) and Unix sockets.
    ///
    /// - Throws: ``PostgresSyncError`` naming what is wrong; its description never holds the password.
    public static func configuration(url: String) throws -> PostgresConnection.Configuration {
        try PostgresURL(url).connectionConfiguration()
    }

    /// `host:port/database` or the socket path, for messages: never the password.
    static func endpoint(of configuration: PostgresConnection.Configuration) -> String {
        let place = configuration.unixSocketPath ?? "\(configuration.host ?? "?"):\(configuration.port ?? 5432)"
        return "postgres://\(configuration.username)@\(place)/\(configuration.database ?? configuration.username)"
    }
}
