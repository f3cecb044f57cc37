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
/// - Several servers, as libpq writes them: `postgres://user@h1:5432,h2:5432,h3/db`, tried in
///   turn; with `target_session_attrs=read-write` (or `primary`), only one that accepts writes is
///   used (``PostgresServers``), so that a replica Patroni promoted is found after a failover.
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// One server of the URL: a host and its port.
    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        public let host: String
        public let port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port`, with an IPv6 address in brackets.
        public var description: String {
            host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// The most servers one URL may name.
    public static let maximumEndpoints = 16

    /// The first server's host name, or `nil` for a Unix socket.
    public let host: String?
    /// The first server's port.
    public let port: Int
    /// Every server the URL names, in its order; empty for a Unix socket.
    public let endpoints: [Endpoint]
    /// Which server a session may use (`target_session_attrs`).
    public let targetSession: TargetSession
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
        // URLComponents reads one host: a list is taken out first and the first host put back.
        let (url, listed) = try Self.hostList(of: url)
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
        let target = query["target_session_attrs"] ?? TargetSession.any.rawValue
        guard let targetSession = TargetSession(rawValue: target) else {
            throw SyncSQLError(
                "The database URL's target_session_attrs \"\(target)\" is not one of any, read-write, primary (sync writes)"
            )
        }
        // Of a list, `any` would keep a replica (a primary that came back demoted, say) and write to it.
        guard listed == nil || targetSession.requiresWrites else {
            throw SyncSQLError(
                "The database URL names several servers: add target_session_attrs=read-write, so that only the primary is used"
            )
        }
        self.targetSession = targetSession
        if let directory = query["host"], directory.hasPrefix("/") {
            unixSocketPath = "\(directory)/.s.PGSQL.\(port)"
            host = nil
            endpoints = []
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw SyncSQLError("The database URL names no host (postgres://user@host/database)")
            }
            self.host = host
            unixSocketPath = nil
            endpoints = listed ?? [Endpoint(host: host, port: port)]
        }
    }

    /// `url` with a list of hosts (`h1:5432,h2,[::1]:5433`) replaced by its first, and the list;
    /// `url` and `nil` when it names one host.
    private static func hostList(of url: String) throws -> (url: String, endpoints: [Endpoint]?) {
        guard let schemeEnd = url.range(of: "://") else { return (url, nil) }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { !"/?#".contains($0) }
        let hosts = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        guard hosts.contains(",") else { return (url, nil) }
        let parts = hosts.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count <= maximumEndpoints else {
            throw SyncSQLError("The database URL names \(parts.count) hosts; at most \(maximumEndpoints)")
        }
        // A part is never quoted: a password with an unencoded `/` ends the authority early.
        let endpoints = try parts.enumerated().map { index, part -> Endpoint in
            let which = "host \(index + 1) of \(parts.count)"
            var host = Substring(part)
            var port = 5432
            if let colon = part.lastIndex(of: ":"), !part[colon...].contains("]") {
                guard let number = Int(part[part.index(after: colon)...]), (1...65535).contains(number) else {
                    throw SyncSQLError("The database URL's host list has a bad port (\(which))")
                }
                (host, port) = (part[..<colon], number)
            }
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-_:%".contains($0) }) else {
                throw SyncSQLError("The database URL's host list names a bad host (\(which))")
            }
            return Endpoint(host: String(host), port: port)
        }
        let first = parts[0]
        return (url.replacingCharacters(in: hosts.startIndex..<hosts.endIndex, with: first), endpoints)
    }

    /// `postgres://user@host:port/database` (every host of a list) or the socket path: never the password.
    public var description: String {
        let place = unixSocketPath ?? endpoints.map(\.description).joined(separator: ",")
        return "postgres://\(user)@\(place)/\(database ?? user)"
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

    /// The configuration of one connection to the first server (of a list, ``servers()``).
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        try connectionConfiguration(endpoint: endpoints.first)
    }

    /// Every server the URL names, each with its connection's configuration, and which of them a
    /// session may use.
    public func servers() throws -> PostgresServers {
        let configurations =
            endpoints.isEmpty
            ? [try connectionConfiguration(endpoint: nil)]
            : try endpoints.map { try connectionConfiguration(endpoint: $0) }
        return PostgresServers(configurations: configurations, target: targetSession)
    }

    private func connectionConfiguration(endpoint: Endpoint?) throws -> PostgresConnection.Configuration {
        guard let endpoint else {
            return PostgresConnection.Configuration(
                unixSocketPath: unixSocketPath ?? "", username: user, password: password, database: database)
        }
        var mode = PostgresConnection.Configuration.TLS.disable
        if let (configuration, isRequired) = tlsConfiguration() {
            let context = try NIOSSLContext(configuration: configuration)
            mode = isRequired ? .require(context) : .prefer(context)
        }
        return PostgresConnection.Configuration(
            host: endpoint.host, port: endpoint.port, username: user, password: password, database: database,
            tls: mode)
    }

    /// The configuration of a pool of connections to the first server, or to `endpoint` (one of
    /// ``endpoints``).
    public func clientConfiguration(endpoint: Endpoint? = nil) -> PostgresClient.Configuration {
        guard let endpoint = endpoint ?? endpoints.first else {
            return PostgresClient.Configuration(
                unixSocketPath: unixSocketPath ?? "", username: user, password: password, database: database)
        }
        var mode = PostgresClient.Configuration.TLS.disable
        if let (configuration, isRequired) = tlsConfiguration() {
            mode = isRequired ? .require(configuration) : .prefer(configuration)
        }
        return PostgresClient.Configuration(
            host: endpoint.host, port: endpoint.port, username: user, password: password, database: database,
            tls: mode)
    }
}
