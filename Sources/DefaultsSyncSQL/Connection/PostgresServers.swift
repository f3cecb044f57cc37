import Logging
import PostgresNIO

/// Which server of a URL's list a session may use: libpq's `target_session_attrs`, of the values
/// that make sense for a program that writes.
public enum TargetSession: String, Sendable {
    /// The first server that takes the connection (libpq's default).
    case any
    /// The first server that accepts writes (`SHOW transaction_read_only` is `off`): a primary,
    /// never a replica nor a demoted primary.
    case readWrite = "read-write"
    /// The same as ``readWrite`` here (libpq 14 tells them apart by hot-standby state only).
    case primary

    /// Whether a session must be able to write.
    public var requiresWrites: Bool { self != .any }
}

/// The servers a ``PostgresURL`` names, in its order, and the rule for choosing one: every
/// connection of the sync store and of the sync service (its pool, its listener, its migration)
/// is made through ``connect(id:logger:)``, so that after a failover each finds the new
/// primary the same way.
public struct PostgresServers: Sendable {
    /// Each server's connection configuration, in the URL's order.
    public let configurations: [PostgresConnection.Configuration]
    public let target: TargetSession

    public init(configurations: [PostgresConnection.Configuration], target: TargetSession) {
        self.configurations = configurations
        self.target = target
    }

    /// One server, used whatever it is (a PostgresNIO configuration given directly).
    public init(_ configuration: PostgresConnection.Configuration) {
        self.init(configurations: [configuration], target: .any)
    }

    /// Connects to each server in turn and returns the first connection the target accepts, with
    /// that server's index.
    ///
    /// - Throws: With one server, what connecting to it threw. With several, a ``SyncSQLError``
    ///   naming each server and why it was passed over (never a password), when none was accepted.
    public func connect(id: Int, logger: Logger) async throws -> (connection: PostgresConnection, index: Int) {
        try await connect { configuration in
            try await Deadline.run(
                Self.serverLimit, { try await open(configuration, id: id, logger: logger) },
                discardingLate: { try? await $0?.close() })
        }
    }

    /// How long ``connect(id:logger:)`` gives each server to take the connection, the log-in and
    /// the question whether it accepts writes (a server lost just after the log-in never answers).
    public static let serverLimit = Duration.seconds(10)

    /// ``connect(id:logger:)`` with each server opened by `open`: ``open(_:id:logger:)`` under a
    /// deadline of the caller's, say.
    public func connect(
        opening open: (PostgresConnection.Configuration) async throws -> PostgresConnection?
    ) async throws -> (connection: PostgresConnection, index: Int) {
        var reasons: [String] = []
        for (index, configuration) in configurations.enumerated() {
            do {
                if let connection = try await open(configuration) { return (connection, index) }
                reasons.append("\(Self.place(of: configuration)): read-only (a replica, or a primary being demoted)")
            } catch {
                guard configurations.count > 1 else { throw error }
                reasons.append("\(Self.place(of: configuration)): \(Self.reason(error))")
            }
            try Task.checkCancellation()
        }
        throw SyncSQLError("no server accepts writes: \(reasons.joined(separator: "; "))")
    }

    /// Connects to the server of `configuration`; returns the connection when the target accepts
    /// that server, and otherwise closes it and returns `nil`.
    public func open(_ configuration: PostgresConnection.Configuration, id: Int, logger: Logger) async throws
        -> PostgresConnection?
    {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
        do {
            guard target.requiresWrites else { return connection }
            if try await Self.acceptsWrites(connection, logger: logger) { return connection }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
        return nil
    }

    /// Whether the server of `connection` accepts writes, as libpq's `read-write` asks it.
    public static func acceptsWrites(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        for try await readOnly in try await connection.query("SHOW transaction_read_only", logger: logger).decode(
            String.self)
        {
            return readOnly == "off"
        }
        return false
    }

    /// Whether `error` says that the server will not take writes now or the connection to it was
    /// lost: a read-only transaction (a demoted primary, a replica), a server shutting down or
    /// starting, or a closed connection. A pool on such a server looks for the primary again.
    public static func isLostPrimary(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransactionError {
            return [error.beginError, error.closureError, error.commitError].contains { $0.map(isLostPrimary) == true }
        }
        if error is Deadline.Passed { return true }
        if let error = error as? PSQLError {
            switch error.code {
            case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection, .poolClosed:
                return true
            default:
                break
            }
            if let state = error.serverInfo?[.sqlState] {
                // read_only_sql_transaction, admin_shutdown, crash_shutdown, cannot_connect_now.
                return ["25006", "57P01", "57P02", "57P03"].contains(state)
            }
            return false
        }
        return false
    }

    /// `host:port` or the socket path.
    public static func place(of configuration: PostgresConnection.Configuration) -> String {
        configuration.unixSocketPath ?? "\(configuration.host ?? "?"):\(configuration.port ?? 5432)"
    }

    /// What went wrong, in the server's words when it said any.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message] ?? error.underlying.map { "cannot connect: \($0)" } ?? "\(error.code)"
        }
        return "\(error)"
    }
}
