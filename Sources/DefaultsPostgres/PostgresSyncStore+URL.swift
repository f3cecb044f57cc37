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
    ///
    /// - Throws: ``PostgresSyncError`` naming what is wrong; its description never holds the password.
    public static func configuration(url: String) throws -> PostgresConnection.Configuration {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresSyncError("The sync URL must look like postgres://user@host:5432/database")
        }
        guard let user = components.percentEncodedUser?.removingPercentEncoding, !user.isEmpty else {
            throw PostgresSyncError("The sync URL names no user (postgres://user@host/database)")
        }
        let password = components.percentEncodedPassword?.removingPercentEncoding
        let database = String(components.path.drop { $0 == "/" })
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let port = components.port ?? 5432
        if let directory = query["host"], directory.hasPrefix("/") {
            return PostgresConnection.Configuration(
                unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: user, password: password,
                database: database.isEmpty ? nil : database)
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresSyncError("The sync URL names no host (postgres://user@host/database)")
        }
        return PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password,
            database: database.isEmpty ? nil : database,
            tls: try tls(mode: query["sslmode"] ?? "prefer", rootCertificate: query["sslrootcert"]))
    }

    private static func tls(mode: String, rootCertificate: String?) throws -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let rootCertificate {
            tls.trustRoots = .file(rootCertificate)
        }
        switch mode {
        case "disable":
            return .disable
        case "prefer", "allow":
            tls.certificateVerification = .none
            return .prefer(try NIOSSLContext(configuration: tls))
        case "require":
            tls.certificateVerification = .none
            return .require(try NIOSSLContext(configuration: tls))
        case "verify-ca", "verify-full":
            tls.certificateVerification = mode == "verify-ca" ? .noHostnameVerification : .fullVerification
            return .require(try NIOSSLContext(configuration: tls))
        default:
            throw PostgresSyncError(
                "The sync URL's sslmode \"\(mode)\" is not one of disable, prefer, require, verify-ca, verify-full")
        }
    }

    /// `host:port/database` or the socket path, for messages: never the password.
    static func endpoint(of configuration: PostgresConnection.Configuration) -> String {
        let place = configuration.unixSocketPath ?? "\(configuration.host ?? "?"):\(configuration.port ?? 5432)"
        return "postgres://\(configuration.username)@\(place)/\(configuration.database ?? configuration.username)"
    }
}
