import Foundation
import PostgresNIO

/// A PostgreSQL connection URL, `postgres://user:password@host:port/database?sslmode=...`, read
/// once for both of PostgresNIO's configurations: a connection's (the sync store's) and a pool's
/// (`defaults-sync-server`'s).
///
/// - `postgresql://` works too; the port defaults to 5432 and the database to the user's name.
/// - User and password are percent-decoded; without a password, none is sent.
/// - `sslmode`: `disable`; `prefer` (the default, as in libpq: TLS when the server offers it);
///   `require` (TLS, certificate not checked); `verify-full` (TLS, certificate and host checked,
///   against `sslrootcert=<file>` when given, else the system's roots).
/// - `host=/directory` in the query connects through the Unix socket in that directory.
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// The server's host name, or `nil` for a Unix socket.
    public let host: String?
    public let port: Int
    /// The Unix socket's path, for `host=/directory`.
    public let unixSocketPath: String?
    public let user: String
    public let password: String?
    public let database: String?
    /// `disable`, `prefer`, `require`, `verify-ca` or `verify-full`.
    public let sslMode: String
    public let rootCertificate: String?

    /// Reads `url`.
    ///
    /// - Throws: ``SyncSQLError`` naming what is wrong; its description never holds the password.
    public init(_ url: String) throws {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw SyncSQLError("The database URL must look like postgres://user@host:5432/database")
        }
        guard let user = components.percentEncodedUser?.removingPercentEncoding, !user.isEmpty else {
            throw SyncSQLError("The database URL names no user (postgres://user@host/database)")
        }
        self.user = user
        password = components.percentEncodedPassword?.removingPercentEncoding
        let database = String(components.path.drop { $0 == "/" })
        self.database = database.isEmpty ? nil : database
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        port = components.port ?? 5432
        sslMode = query["sslmode"] ?? "prefer"
        rootCertificate = query["sslrootcert"]
        guard ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(sslMode) else {
            throw SyncSQLError(
                "The database URL's sslmode \"\(sslMode)\" is not one of disable, prefer, require, verify-ca, verify-full"
            )
        }
        if let directory = query["host"], directory.hasPrefix("/") {
            unixSocketPath = "\(directory)/.s.PGSQL.\(port)"
            host = nil
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw SyncSQLError("The database URL names no host (postgres://user@host/database)")
            }
            self.host = host
            unixSocketPath = nil
        }
    }

    /// `postgres://user@host:port/database` or the socket path: never the password.
    public var description: String {
        "postgres://\(user)@\(unixSocketPath ?? "\(host ?? "?"):\(port)")/\(database ?? user)"
    }

    /// The TLS settings `sslmode` asks for, or `nil` for none; `isRequired` unless TLS is only
    /// preferred.
    public func tlsConfiguration() -> (configuration: TLSConfiguration, isRequired: Bool)? {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let rootCertificate {
            tls.trustRoots = .file(rootCertificate)
        }
        switch sslMode {
        case "disable":
            return nil
        case "prefer", "allow":
            tls.certificateVerification = .none
            return (tls, false)
        case "require":
            tls.certificateVerification = .none
            return (tls, true)
        default:
            tls.certificateVerification = sslMode == "verify-ca" ? .noHostnameVerification : .fullVerification
            return (tls, true)
        }
    }

    /// The configuration of one connection.
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        if let unixSocketPath {
            return PostgresConnection.Configuration(
                unixSocketPath: unixSocketPath, username: user, password: password, database: database)
        }
        var mode = PostgresConnection.Configuration.TLS.disable
        if let (configuration, isRequired) = tlsConfiguration() {
            let context = try NIOSSLContext(configuration: configuration)
            mode = isRequired ? .require(context) : .prefer(context)
        }
        return PostgresConnection.Configuration(
            host: host ?? "", port: port, username: user, password: password, database: database, tls: mode)
    }

    /// The configuration of a pool of connections.
    public func clientConfiguration() -> PostgresClient.Configuration {
        if let unixSocketPath {
            return PostgresClient.Configuration(
                unixSocketPath: unixSocketPath, username: user, password: password, database: database)
        }
        var mode = PostgresClient.Configuration.TLS.disable
        if let (configuration, isRequired) = tlsConfiguration() {
            mode = isRequired ? .require(configuration) : .prefer(configuration)
        }
        return PostgresClient.Configuration(
            host: host ?? "", port: port, username: user, password: password, database: database, tls: mode)
    }
}
