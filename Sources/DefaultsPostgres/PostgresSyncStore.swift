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
/// - Learns of other machines' changes by `LISTEN`/`NOTIFY`. After the first connection the
///   library compares every record's timestamp (one query); after a reconnection the store fetches
///   only the changes numbered after the last it reported. Reconnects with exponential back-off.
/// - Never waits on the server without limit: every call must be answered within
///   ``responseTimeout``, and while idle a liveness check every ``livenessCheckInterval`` notices a
///   server that stopped answering (a crash, a lost network) without closing the connection. Either
///   closes the connection and reconnects; changes made meanwhile are kept and pushed then.
/// - Every statement is parameterized; the password is never logged nor part of an error.
/// - The namespace keeps applications apart in one database.
public final class PostgresSyncStore: DefaultsSyncStore {
    /// The namespace this store's records live in.
    public let namespace: String
    /// The server and namespace, without credentials.
    public let description: String

    /// How long the server may take to answer one call (a connection with its log-in, a push, a
    /// query, a liveness check) before the connection is given up and made again.
    public let responseTimeout: Duration
    /// How often an idle connection checks that the server still answers.
    public let livenessCheckInterval: Duration

    let configuration: PostgresConnection.Configuration
    /// The server (`host:port/database`), without credentials.
    public let endpoint: String
    let logger: Logger
    private let reconnectDelays: ClosedRange<Duration>
    /// The session's two connections: one listens (and fetches what its notifications
    /// announce); the other pushes and answers the catch-up, so that a push never runs a
    /// transaction on the listening connection.
    private let connections = Mutex<(listener: PostgresConnection, worker: PostgresConnection)?>(nil)
    /// The namespace's sequence number up to which every change was reported or was there when
    /// the store first listened (and so before the library's first catch-up). Changes number in
    /// commit order (``PostgresSyncSchema``), so the changes after it are all that was missed.
    private let position = Mutex<Int64?>(nil)
    static let connectionIDs = Atomic<Int>(0)

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
    ///   - responseTimeout: How long the server may take to answer one call before the connection
    ///     is given up and made again.
    ///   - livenessCheckInterval: How often an idle connection checks that the server still answers
    ///     (a `SELECT 1`).
    /// - Throws: ``PostgresSyncError`` for an empty namespace or a timeout or interval that is not
    ///   positive.
    public init(
        configuration: PostgresConnection.Configuration,
        namespace: String,
        reconnectDelays: ClosedRange<Duration> = .milliseconds(250)...(.seconds(30)),
        responseTimeout: Duration = .seconds(30),
        livenessCheckInterval: Duration = .seconds(30)
    ) throws {
        guard !namespace.isEmpty else {
            throw PostgresSyncError("The sync namespace is empty; use your application's identifier")
        }
        guard responseTimeout > .zero, livenessCheckInterval > .zero, reconnectDelays.lowerBound > .zero else {
            throw PostgresSyncError("The sync store's timeout, liveness interval and reconnect delays must be positive")
        }
        self.configuration = configuration
        self.namespace = namespace
        self.reconnectDelays = reconnectDelays
        self.responseTimeout = responseTimeout
        self.livenessCheckInterval = livenessCheckInterval
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

    /// Opens the session's connections, migrates, listens, and returns (or throws) when either
    /// connection ends or stops answering.
    private func runConnection(
        reporting report: @escaping @Sendable (SyncEvent) async -> Void,
        connected: () -> Void
    ) async throws {
        let listener = try await connect()
        var worker: PostgresConnection?
        do {
            let logger = logger
            try await answer(from: listener, "while migrating the schema") {
                try await PostgresSyncSchema.migrator.migrate(listener, logger: logger)
            }
            let tag = try await answer(from: listener, "to md5()") { try await self.namespaceTag(on: listener) }
            let pushes = try await connect()
            worker = pushes
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Each ends the listen below, by closing the listening connection, when its
                // connection stops answering.
                group.addTask { try await self.checkLiveness(of: listener) }
                group.addTask {
                    do {
                        try await self.checkLiveness(of: pushes)
                    } catch let error as CancellationError {
                        throw error
                    } catch {
                        try? await listener.close()
                        throw error
                    }
                }
                do {
                    try await listen(on: listener, worker: pushes, tag: tag, reporting: report, connected: connected)
                } catch {
                    group.cancelAll()
                    // A liveness check's error, when it closed a connection, says why (the other
                    // check ends cancelled).
                    while let result = await group.nextResult() {
                        if case .failure(let reason as PostgresSyncError) = result {
                            throw reason
                        }
                    }
                    throw error
                }
                group.cancelAll()
            }
            throw PostgresSyncError("\(endpoint): the connection ended")
        } catch {
            connections.withLock { $0 = nil }
            try? await listener.close()
            try? await worker?.close()
            throw error
        }
    }

    /// Listens until the connection ends, reporting `.connected` once listening, then each change
    /// of this namespace.
    private func listen(
        on connection: PostgresConnection,
        worker: PostgresConnection,
        tag: Substring,
        reporting report: @escaping @Sendable (SyncEvent) async -> Void,
        connected: () -> Void
    ) async throws {
        try await connection.listen(on: PostgresSyncSchema.channel) { notifications in
            if self.position.withLock({ $0 }) == nil {
                // Listening already: what commits from now on is announced.
                let latest = try await answer(from: connection, "for the latest change") {
                    try await self.latestNumber(on: connection)
                }
                self.raisePosition(to: latest)
            }
            self.connections.withLock { $0 = (connection, worker) }
            connected()
            await report(.connected)
            // Notifications coalesce: one fetches every change after the position, and those of
            // the changes it brought are then passed over.
            for try await notification in notifications {
                let parts = notification.payload.split(separator: " ")
                guard parts.count == 2, parts[0] == tag, let seq = Int64(parts[1]),
                    let since = self.position.withLock({ $0 }), seq > since
                else { continue }
                let changes = try await answer(from: connection, "for changed records") {
                    try await self.changes(after: since, on: connection)
                }
                if let last = changes.last {
                    await report(.received(changes.map(\.record)))
                    self.raisePosition(to: last.seq)
                }
            }
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

    /// The connection pushes and queries use; never one already closed (PostgresNIO would not
    /// answer a query written to it). One found closed (a call on it timed out) ends the
    /// session, so that the next opens both connections again.
    private func current() throws -> PostgresConnection {
        guard let (listener, worker) = connections.withLock({ $0 }) else {
            throw PostgresSyncError.notConnected
        }
        guard !worker.isClosed else {
            Task { try? await listener.close() }
            throw PostgresSyncError.notConnected
        }
        return worker
    }

    // MARK: Records

    public func timestamps() async throws -> [String: SyncTimestamp] {
        let connection = try current()
        let (namespace, logger) = (namespace, logger)
        return try await answer(from: connection, "for the catch-up", describingFailure: true) {
            let rows = try await connection.query(
                "SELECT key, clock_wall, clock_counter, clock_origin FROM defaults_sync_values WHERE namespace = \(namespace)",
                logger: logger)
            var timestamps: [String: SyncTimestamp] = [:]
            for try await (key, wall, counter, origin) in rows.decode((String, Int64, Int64, String).self) {
                timestamps[key] = SyncTimestamp(wallTime: wall, counter: counter, origin: origin)
            }
            return timestamps
        }
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        let connection = try current()
        // A name with a NUL is no text of PostgreSQL's, so no record holds it (and asking fails).
        let names = keys.filter { !$0.utf8.contains(0) }
        guard !names.isEmpty else { return [] }
        let condition: PostgresQuery = "WHERE namespace = \(namespace) AND key = ANY(\(names))"
        return try await answer(from: connection, "for the catch-up's records", describingFailure: true) {
            try await self.fetch(condition, on: connection)
        }
    }

    public func changesSinceLastConnection() async throws -> [SyncRecord]? {
        let connection = try current()
        guard let since = position.withLock({ $0 }) else { return nil }
        let (changes, latest) = try await answer(
            from: connection, "for the changes since the last connection", describingFailure: true
        ) {
            (try await self.changes(after: since, on: connection), try await self.latestNumber(on: connection))
        }
        guard latest >= since else {
            // The numbers went back: a new or restored database. The library catches up in full.
            position.withLock { $0 = latest }
            return nil
        }
        if let last = changes.last {
            raisePosition(to: last.seq)
        }
        return changes.map(\.record)
    }

    private func raisePosition(to seq: Int64) {
        position.withLock { $0 = max($0 ?? seq, seq) }
    }

    /// The namespace's highest sequence number, 0 when it holds no record.
    private func latestNumber(on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query(
            "SELECT coalesce(max(seq), 0) FROM defaults_sync_values WHERE namespace = \(namespace)", logger: logger)
        for try await latest in rows.decode(Int64.self) {
            return latest
        }
        return 0
    }

    /// This namespace's records changed after sequence number `seq`, in order, with their numbers.
    private func changes(after seq: Int64, on connection: PostgresConnection) async throws -> [(
        record: SyncRecord, seq: Int64
    )] {
        var changes: [(record: SyncRecord, seq: Int64)] = []
        let rows = try await connection.query(
            """
            SELECT key, value, clock_wall, clock_counter, clock_origin, seq FROM defaults_sync_values
            WHERE namespace = \(namespace) AND seq > \(seq) ORDER BY seq
            """, logger: logger)
        for try await (key, value, wall, counter, origin, seq) in rows.decode(
            (String, Data?, Int64, Int64, String, Int64).self)
        {
            let timestamp = SyncTimestamp(wallTime: wall, counter: counter, origin: origin)
            changes.append((SyncRecord(key: key, value: value, timestamp: timestamp), seq))
        }
        return changes
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
        // Sorted by key: two machines pushing overlapping keys lock their rows in one order, and
        // never deadlock each other.
        let sorted = records.sorted { $0.key < $1.key }
        let storable = sorted.filter { !$0.key.utf8.contains(0) }
        var refused: [String: String] = [:]
        for record in sorted where record.key.utf8.contains(0) {
            refused[record.key] = "PostgreSQL's text cannot hold a NUL character"
        }
        do {
            try await answer(from: connection, "to a push") {
                try await Self.store(storable, namespace: namespace, on: connection, logger: logger)
            }
        } catch let error where Self.refusal(error) != nil {
            // One record the server will never take fails the whole batch: store them one at a
            // time, and set aside those it refuses.
            for record in storable {
                do {
                    try await answer(from: connection, "to a push") {
                        try await Self.store([record], namespace: namespace, on: connection, logger: logger)
                    }
                } catch let error {
                    guard let reason = Self.refusal(error) else { throw PostgresSyncError(error, endpoint: endpoint) }
                    refused[record.key] = reason
                }
            }
        } catch {
            throw PostgresSyncError(error, endpoint: endpoint)
        }
        if !refused.isEmpty {
            throw SyncRecordsRefused(refused)
        }
    }

    /// The server's reason when `error` refuses the data itself (SQLSTATE class 22, data
    /// exception, such as an invalid byte sequence; class 54, a program limit such as an index
    /// row's size): trying again would fail again. `nil` for any other error.
    static func refusal(_ error: any Error) -> String? {
        var error = error
        if let transaction = error as? PostgresTransactionError,
            let cause = transaction.closureError ?? transaction.commitError
        {
            error = cause
        }
        guard let info = (error as? PSQLError)?.serverInfo, let state = info[.sqlState],
            state.hasPrefix("22") || state.hasPrefix("54")
        else { return nil }
        return "\(info[.message] ?? "refused by the server") (SQLSTATE \(state))"
    }

    private static func store(
        _ records: [SyncRecord], namespace: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
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
                        updated_at = now()
                    WHERE (EXCLUDED.clock_wall, EXCLUDED.clock_counter, EXCLUDED.clock_origin)
                        > (stored.clock_wall, stored.clock_counter, stored.clock_origin)
                    """,
                    logger: logger)
            }
        }
    }

    // MARK: Status

    /// What the server holds for this namespace, for `defaults-sync status`: connects, reads, and
    /// disconnects. A database never used for syncing holds nothing.
    ///
    /// - Throws: ``PostgresSyncError`` when the server cannot be reached or refuses the connection.
    public func serverSummary() async throws -> (records: Int, lastChange: Date?) {
        let connection: PostgresConnection
        do {
            connection = try await connect()
        } catch {
            throw PostgresSyncError(error, endpoint: endpoint)
        }
        do {
            let summary = try await answer(from: connection, "to the status query") {
                try await self.summary(on: connection)
            }
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
