import Defaults
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A `DefaultsSyncStore` on PostgreSQL: `Defaults.iCloud` keys sync between every
/// machine that uses the same database and namespace.
///
/// ```swift
/// import Defaults
/// import DefaultsPostgres
///
/// Defaults.iCloud.use(try PostgresSyncStore(url: "postgres://user@host:5432/db", namespace: "com.example.app"))
/// ```
///
/// - Creates and migrates its tables itself (`defaults_sync_schema`, `defaults_sync_values`).
/// - Learns of other machines' changes by `LISTEN`/`NOTIFY`, and catches up with one query after
///   every (re)connection; reconnects with exponential back-off.
/// - Every statement is parameterized; the password is never logged nor part of an error.
/// - The namespace keeps applications apart in one database.
public final class PostgresSyncStore: DefaultsSyncStore {
    /// The namespace this store's records live in.
    public let namespace: String
    /// The server and namespace, without credentials.
    public let description: String

    private let configuration: PostgresConnection.Configuration
    private let endpoint: String
    private let reconnectDelays: ClosedRange<Duration>
    private let logger: Logger
    private let connection = Mutex<PostgresConnection?>(nil)
    private static let connectionIDs = Atomic<Int>(0)

    /// Connects through a URL, `postgres://user:password@host:port/database`; see
    /// ``configuration(url:)`` for TLS (`sslmode`) and Unix sockets.
    ///
    /// Nothing connects until the store is given to `Defaults.iCloud.use(_:)`.
    ///
    /// - Throws: ``PostgresSyncError`` for a URL that cannot be read or an empty namespace.
    public convenience init(url: String, namespace: String) throws {
        try self.init(configuration: Self.configuration(url: url), namespace: namespace)
    }

    /// Connects with a PostgresNIO configuration (TLS, timeouts and the rest through its options).
    ///
    /// - Parameters:
    ///   - configuration: Where and how to connect: host, port, user, password, database and TLS.
    ///   - namespace: Keeps applications apart in one database, for example a bundle identifier.
    ///   - reconnectDelays: The first and the longest wait before reconnecting; each failed attempt
    ///     doubles the wait.
    /// - Throws: ``PostgresSyncError`` for an empty namespace.
    public init(
        configuration: PostgresConnection.Configuration,
        namespace: String,
        reconnectDelays: ClosedRange<Duration> = .milliseconds(250)...(.seconds(30))
    ) throws {
        guard !namespace.isEmpty else {
            throw PostgresSyncError("The sync namespace is empty; use your application's identifier")
        }
        self.configuration = configuration
        self.namespace = namespace
        self.reconnectDelays = reconnectDelays
        endpoint = Self.endpoint(of: configuration)
        description = "\(endpoint) (namespace \(namespace))"
        var logger = Logger(label: "swift-defaults.postgres")
        logger.logLevel = .warning
        self.logger = logger
    }

    // MARK: Connection

    public func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        var delay = reconnectDelays.lowerBound
        while !Task.isCancelled {
            do {
                try await runConnection(reporting: report) {
                    delay = self.reconnectDelays.lowerBound
                }
            } catch {
                guard !Task.isCancelled else { break }
                await report(.disconnected(PostgresSyncError(error, endpoint: endpoint)))
            }
            guard !Task.isCancelled else { break }
            // Jitter, so that many machines losing one server do not all come back at once.
            try? await Task.sleep(for: delay * Double.random(in: 0.8...1.2))
            delay = min(delay * 2, reconnectDelays.upperBound)
        }
    }

    /// Opens a connection, migrates, listens, and returns (or throws) when the connection ends.
    private func runConnection(
        reporting report: @escaping @Sendable (SyncEvent) async -> Void,
        connected: () -> Void
    ) async throws {
        let connection = try await PostgresConnection.connect(
            configuration: configuration,
            id: Self.connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue,
            logger: logger)
        do {
            try await PostgresSyncSchema.migrate(connection, logger: logger)
            let tag = try await namespaceTag(on: connection)
            try await connection.listen(on: PostgresSyncSchema.channel) { notifications in
                self.connection.withLock { $0 = connection }
                connected()
                await report(.connected)
                for try await notification in notifications {
                    let parts = notification.payload.split(separator: " ")
                    guard parts.count == 2, parts[0] == tag, let seq = Int64(parts[1]) else { continue }
                    let records = try await fetch(
                        "WHERE namespace = \(namespace) AND seq = \(seq)", on: connection)
                    if !records.isEmpty {
                        await report(.received(records))
                    }
                }
            }
            throw PostgresSyncError("\(endpoint): the connection ended")
        } catch {
            self.connection.withLock { $0 = nil }
            try? await connection.close()
            throw error
        }
    }

    /// The tag this namespace's notifications carry: `md5(namespace)`, computed by the server.
    private func namespaceTag(on connection: PostgresConnection) async throws -> Substring {
        for try await tag in try await connection.query("SELECT md5(\(namespace))", logger: logger).decode(String.self)
        {
            return Substring(tag)
        }
        throw PostgresSyncError("\(endpoint): md5() returned nothing")
    }

    private func current() throws -> PostgresConnection {
        guard let connection = connection.withLock({ $0 }) else { throw PostgresSyncError.notConnected }
        return connection
    }

    // MARK: Records

    public func timestamps() async throws -> [String: SyncTimestamp] {
        let rows = try await current().query(
            "SELECT key, clock_wall, clock_counter, clock_origin FROM defaults_sync_values WHERE namespace = \(namespace)",
            logger: logger)
        var timestamps: [String: SyncTimestamp] = [:]
        for try await (key, wall, counter, origin) in rows.decode((String, Int64, Int64, String).self) {
            timestamps[key] = SyncTimestamp(wallTime: wall, counter: counter, origin: origin)
        }
        return timestamps
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        try await fetch("WHERE namespace = \(namespace) AND key = ANY(\(keys))", on: current())
    }

    private func fetch(_ condition: PostgresQuery, on connection: PostgresConnection) async throws -> [SyncRecord] {
        // A fixed column list before the caller's parameterized condition.
        let query = PostgresQuery(
            unsafeSQL: "SELECT key, value, clock_wall, clock_counter, clock_origin FROM defaults_sync_values "
                + condition.sql,
            binds: condition.binds)
        var records: [SyncRecord] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (key, value, wall, counter, origin) in rows.decode((String, Data?, Int64, Int64, String).self) {
            records.append(
                SyncRecord(
                    key: key, value: value, timestamp: SyncTimestamp(wallTime: wall, counter: counter, origin: origin)))
        }
        return records
    }

    public func push(_ records: [SyncRecord]) async throws {
        let connection = try current()
        let namespace = namespace
        let logger = logger
        try await connection.withTransaction(logger: logger) { connection in
            for record in records {
                // The row changes only for a later version: (wall, counter, origin) in byte order.
                try await connection.query(
                    """
                    INSERT INTO defaults_sync_values AS stored (namespace, key, value, clock_wall, clock_counter, clock_origin)
                    VALUES (\(namespace), \(record.key), \(record.value), \(record.timestamp.wallTime), \
                    \(record.timestamp.counter), \(record.timestamp.origin))
                    ON CONFLICT (namespace, key) DO UPDATE SET
                        value = EXCLUDED.value, clock_wall = EXCLUDED.clock_wall,
                        clock_counter = EXCLUDED.clock_counter, clock_origin = EXCLUDED.clock_origin,
                        seq = nextval('defaults_sync_seq'), updated_at = now()
                    WHERE (EXCLUDED.clock_wall, EXCLUDED.clock_counter, EXCLUDED.clock_origin)
                        > (stored.clock_wall, stored.clock_counter, stored.clock_origin)
                    """,
                    logger: logger)
            }
        }
    }

    // MARK: Status

    /// What the server holds for this namespace, for `defaults sync status`: connects, reads, and
    /// disconnects. A database never used for syncing holds nothing.
    ///
    /// - Throws: ``PostgresSyncError`` when the server cannot be reached or refuses the connection.
    public func serverSummary() async throws -> (records: Int, lastChange: Date?) {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: configuration,
                id: Self.connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue,
                logger: logger)
        } catch {
            throw PostgresSyncError(error, endpoint: endpoint)
        }
        do {
            let summary = try await summary(on: connection)
            try? await connection.close()
            return summary
        } catch {
            try? await connection.close()
            throw PostgresSyncError(error, endpoint: endpoint)
        }
    }

    private func summary(on connection: PostgresConnection) async throws -> (records: Int, lastChange: Date?) {
        let exists = try await connection.query(
            "SELECT to_regclass('defaults_sync_values') IS NOT NULL", logger: logger
        ).decode(Bool.self).first { _ in true }
        guard exists == true else { return (0, nil) }
        let rows = try await connection.query(
            "SELECT count(*), max(updated_at) FROM defaults_sync_values WHERE namespace = \(namespace)",
            logger: logger)
        for try await (count, last) in rows.decode((Int64, Date?).self) {
            return (Int(count), last)
        }
        return (0, nil)
    }
}
