import Defaults
import DefaultsSyncProtocol
import DefaultsSyncSQL
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
/// - Creates and migrates its tables itself (`defaults_sync_schema`, `defaults_sync_values`), with
///   the SQL it shares with the sync service (`DefaultsSyncSQL`).
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

    /// The servers, and which of them the store connects to (``PostgresServers``).
    let servers: PostgresServers
    /// The server (`host:port/database`, every host of a list), without credentials.
    public let endpoint: String
    let logger: Logger
    private let reconnection: ReconnectionPolicy
    /// This namespace's rows, and the statements run on them.
    private let rows: SyncRows
    /// The session's two connections: one listens (and fetches what its notifications
    /// announce); the other pushes and answers the catch-up, so that a push never runs a
    /// transaction on the listening connection.
    private let connections = Mutex<(listener: PostgresConnection, worker: PostgresConnection)?>(nil)
    /// The namespace's sequence number up to which every change was reported or was there when
    /// the store first listened (and so before the library's first catch-up). Changes number in
    /// commit order (`SyncSchema.store`), so the changes after it are all that was missed.
    private let position = Mutex<Int64?>(nil)
    static let connectionIDs = Atomic<Int>(0)

    /// Connects through a URL, `postgres://user:password@host:port/database`; see
    /// ``configuration(url:)`` for TLS (`sslmode`) and Unix sockets.
    ///
    /// A URL may name several servers, as libpq writes it:
    /// `postgres://user@h1:5432,h2:5432,h3:5432/db?target_session_attrs=read-write` connects to the
    /// first that accepts writes, so that after a failover (a Patroni cluster promoting a replica)
    /// the store reconnects to the new primary, never to a replica.
    ///
    /// Nothing connects until the store is given to `Defaults.iCloud.use(_:)`.
    ///
    /// - Parameters: as ``init(configuration:namespace:reconnectDelays:responseTimeout:livenessCheckInterval:)``.
    /// - Throws: ``PostgresSyncError`` for a URL that cannot be read or an empty namespace.
    public convenience init(
        url: String,
        namespace: String,
        reconnectDelays: ClosedRange<Duration> = .milliseconds(250)...(.seconds(30)),
        responseTimeout: Duration = .seconds(30),
        livenessCheckInterval: Duration = .seconds(30)
    ) throws {
        let database: PostgresURL
        let servers: PostgresServers
        do {
            database = try PostgresURL(url)
            servers = try database.servers()
        } catch let error as SyncSQLError {
            throw PostgresSyncError(error.description)
        }
        try self.init(
            servers: servers, endpoint: database.description, namespace: namespace, reconnectDelays: reconnectDelays,
            responseTimeout: responseTimeout, livenessCheckInterval: livenessCheckInterval)
    }

    /// Connects with a PostgresNIO configuration (TLS, timeouts and the rest through its options).
    ///
    /// - Parameters:
    ///   - configuration: Where and how to connect: host, port, user, password, database and TLS.
    ///   - namespace: Keeps applications apart in one database, for example a bundle identifier.
    ///   - reconnectDelays: The first and the longest wait before reconnecting; each failed attempt
    ///     doubles the wait, and each wait is jittered (`ReconnectionPolicy`).
    ///   - responseTimeout: How long the server may take to answer one call before the connection
    ///     is given up and made again.
    ///   - livenessCheckInterval: How often an idle connection checks that the server still answers
    ///     (a `SELECT 1`).
    /// - Throws: ``PostgresSyncError`` for an empty namespace or a timeout or interval that is not
    ///   positive.
    public convenience init(
        configuration: PostgresConnection.Configuration,
        namespace: String,
        reconnectDelays: ClosedRange<Duration> = .milliseconds(250)...(.seconds(30)),
        responseTimeout: Duration = .seconds(30),
        livenessCheckInterval: Duration = .seconds(30)
    ) throws {
        try self.init(
            servers: PostgresServers(configuration), endpoint: Self.endpoint(of: configuration), namespace: namespace,
            reconnectDelays: reconnectDelays, responseTimeout: responseTimeout,
            livenessCheckInterval: livenessCheckInterval)
    }

    init(
        servers: PostgresServers,
        endpoint: String,
        namespace: String,
        reconnectDelays: ClosedRange<Duration>,
        responseTimeout: Duration,
        livenessCheckInterval: Duration
    ) throws {
        guard !namespace.isEmpty else {
            throw PostgresSyncError("The sync namespace is empty; use your application's identifier")
        }
        guard responseTimeout > .zero, livenessCheckInterval > .zero, reconnectDelays.lowerBound > .zero else {
            throw PostgresSyncError("The sync store's timeout, liveness interval and reconnect delays must be positive")
        }
        self.servers = servers
        self.namespace = namespace
        reconnection = ReconnectionPolicy(delays: reconnectDelays)
        rows = SyncTable.store(namespace: namespace)
        self.responseTimeout = responseTimeout
        self.livenessCheckInterval = livenessCheckInterval
        self.endpoint = endpoint
        description = "\(endpoint) (namespace \(namespace))"
        var logger = Logger(label: "swift-defaults.postgres")
        logger.logLevel = .warning
        self.logger = logger
    }

    // MARK: Connection

    public func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        // A connection that listened starts the back-off over.
        await reconnection.run(until: Task.isCancelled) { connected in
            try await runConnection(reporting: report, connected: connected)
        } failed: { error in
            await report(.disconnected(PostgresSyncError(error, endpoint: endpoint)))
        }
    }

    /// Opens the session's connections, migrates, listens, and returns (or throws) when either
    /// connection ends or stops answering.
    private func runConnection(
        reporting report: @escaping @Sendable (SyncEvent) async -> Void,
        connected: @escaping @Sendable () -> Void
    ) async throws {
        let listener = try await connect()
        var worker: PostgresConnection?
        do {
            let logger = logger
            try await answer(from: listener, "while migrating the schema") {
                try await SyncSchema.store.migrate(listener, logger: logger)
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
        connected: @escaping @Sendable () -> Void
    ) async throws {
        try await connection.listen(on: SyncSchema.storeChannel) { notifications in
            if self.position.withLock({ $0 }) == nil {
                // Listening already: what commits from now on is announced.
                let latest = try await answer(from: connection, "for the latest change") {
                    try await self.rows.latest(on: connection, logger: self.logger)
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
                    try await self.rows.changes(after: since, on: connection, logger: self.logger)
                }
                if let last = changes.last?.seq {
                    await report(.received(changes.map(SyncRecord.init)))
                    self.raisePosition(to: last)
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
        let (rows, logger) = (rows, logger)
        return try await answer(from: connection, "for the catch-up", describingFailure: true) {
            var timestamps: [String: SyncTimestamp] = [:]
            for stamp in try await rows.stamps(on: connection, logger: logger) {
                timestamps[stamp.key] = SyncTimestamp(stamp)
            }
            return timestamps
        }
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        let connection = try current()
        let (rows, logger) = (rows, logger)
        return try await answer(from: connection, "for the catch-up's records", describingFailure: true) {
            try await rows.records(forKeys: keys, on: connection, logger: logger).map(SyncRecord.init)
        }
    }

    public func changesSinceLastConnection() async throws -> [SyncRecord]? {
        let connection = try current()
        guard let since = position.withLock({ $0 }) else { return nil }
        let (rows, logger) = (rows, logger)
        let (changes, latest) = try await answer(
            from: connection, "for the changes since the last connection", describingFailure: true
        ) {
            (
                try await rows.changes(after: since, on: connection, logger: logger),
                try await rows.latest(on: connection, logger: logger)
            )
        }
        guard latest >= since else {
            // The numbers went back: a new or restored database. The library catches up in full.
            position.withLock { $0 = latest }
            return nil
        }
        if let last = changes.last?.seq {
            raisePosition(to: last)
        }
        return changes.map(SyncRecord.init)
    }

    private func raisePosition(to seq: Int64) {
        position.withLock { $0 = max($0 ?? seq, seq) }
    }

    public func push(_ records: [SyncRecord]) async throws {
        let connection = try current()
        let (rows, logger) = (rows, logger)
        // Sorted by key: two machines pushing overlapping keys lock their rows in one order, and
        // never deadlock each other.
        let sorted = records.sorted(by: { $0.key < $1.key }).map(WireRecord.init)
        var refused: [String: String] = [:]
        for record in sorted {
            refused[record.key] = RecordRefusal.reason(for: record)
        }
        let storable = sorted.filter { refused[$0.key] == nil }
        do {
            // One record the server will never take fails the whole batch: it is then stored again
            // with a savepoint around each record, setting aside those the server refuses.
            let refusedByServer = try await RefusedByDatabase.retrying { savepoints in
                try await answer(from: connection, "to a push") {
                    try await connection.withTransaction(logger: logger) { connection in
                        var refused: [String: String] = [:]
                        for record in storable {
                            do {
                                _ = try await rows.store(record, savepoint: savepoints, on: connection, logger: logger)
                            } catch let refusal as RefusedByDatabase where savepoints {
                                refused[record.key] = refusal.description
                            }
                        }
                        return refused
                    }
                }
            }
            refused.merge(refusedByServer) { first, _ in first }
        } catch {
            throw PostgresSyncError(error, endpoint: endpoint)
        }
        if !refused.isEmpty {
            throw SyncRecordsRefused(refused)
        }
    }
}
