import DefaultsSyncSQL
import Foundation
import PostgresNIO

extension PostgresSyncStore {
    /// Reads a connection URL, `postgres://user:password@host:port/database?sslmode=...`.
    ///
    /// - `postgresql://` works too; the port defaults to 5432 and the database to the user's name.
    /// - User and password are percent-decoded; without a password, none is sent.
    /// - `sslmode`: `disable`; `prefer` (the default, as in libpq: TLS when the server offers it);
    ///   `require` (TLS, certificate not checked); `verify-full` (TLS, certificate and host checked,
    ///   against `sslrootcert=<file>` when given, else the system's roots).
    /// - `host=/directory` in the query connects through the Unix socket in that directory.
    /// - A URL naming several servers (`h1:5432,h2:5432`) is refused: one configuration is one
    ///   server; ``init(url:namespace:reconnectDelays:responseTimeout:livenessCheckInterval:)``
    ///   takes such a URL.
    ///
    /// - Throws: ``PostgresSyncError`` naming what is wrong; its description never holds the password.
    public static func configuration(url: String) throws -> PostgresConnection.Configuration {
        do {
            let database = try PostgresURL(url)
            guard database.endpoints.count <= 1 else {
                throw SyncSQLError(
                    "One configuration is one server; give a URL of several to PostgresSyncStore(url:namespace:)")
            }
            return try database.connectionConfiguration()
        } catch let error as SyncSQLError {
            throw PostgresSyncError(error.description)
        }
    }

    /// `host:port/database` or the socket path, for messages: never the password.
    static func endpoint(of configuration: PostgresConnection.Configuration) -> String {
        let place = PostgresServers.place(of: configuration)
        return "postgres://\(configuration.username)@\(place)/\(configuration.database ?? configuration.username)"
    }
}
