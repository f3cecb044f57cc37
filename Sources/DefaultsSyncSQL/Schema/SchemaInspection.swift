import Logging
import PostgresNIO
import Synchronization

/// What a database holds of the two sync schemas, ``SyncSchema/store`` and ``SyncSchema/service``,
/// and at which version: read by ``SyncSchema/inspect(url:timeout:logger:)`` without changing
/// anything, where ``SyncSchema/migrate(_:logger:)`` would create or migrate.
public struct SchemaInspection: Sendable, Equatable {
    /// The version `PostgresSyncStore`'s schema is at (`defaults_sync_schema`), or `nil` when the
    /// database holds neither its version table nor its values table (`defaults_sync_values`).
    public let storeVersion: Int?
    /// The version the sync service's schema is at (`defaults_sync_service_schema`: the values
    /// part and the server's own statements), or `nil` when the database holds neither its
    /// version table nor its values table (`defaults_sync_service_values`).
    public let serviceVersion: Int?

    /// Describes what a database holds; a values table without its version table is at version 0.
    public init(storeVersion: Int?, serviceVersion: Int?) {
        self.storeVersion = storeVersion
        self.serviceVersion = serviceVersion
    }

    /// Whether the database holds no table of either schema: nothing has synced through it.
    public var holdsNoSyncTable: Bool { storeVersion == nil && serviceVersion == nil }

    /// The version `schema` is at (found by its version table, so the service's schema as the
    /// server extends it is found too), or `nil` when the database does not hold it.
    public func version(of schema: SyncSchema) -> Int? {
        switch schema.versionTable {
        case SyncSchema.store.versionTable: storeVersion
        case SyncSchema.service.versionTable: serviceVersion
        default: nil
        }
    }

    /// Where a database stands with a schema, against the version this program migrates to.
    public enum Standing: Sendable, Equatable {
        /// The database holds no table of the schema.
        case absent
        /// At an older version: ``SyncSchema/migrate(_:logger:)`` would migrate it.
        case older(version: Int)
        /// At ``SyncSchema/currentVersion``: ``SyncSchema/migrate(_:logger:)`` would change nothing.
        case current
        /// Migrated by a newer program: ``SyncSchema/migrate(_:logger:)`` would refuse it.
        case newer(version: Int)
    }

    /// Where the database stands with `schema`.
    public func standing(of schema: SyncSchema) -> Standing {
        guard let version = version(of: schema) else { return .absent }
        if version < schema.currentVersion { return .older(version: version) }
        if version > schema.currentVersion { return .newer(version: version) }
        return .current
    }
}

extension SyncSchema {
    /// Which of the two schemas a database holds, and at which version, over one connection of its
    /// own, in a read-only transaction: two `SELECT`s at most, no DDL, no lock; the connection is
    /// closed after. A role with only `CONNECT` on the database may ask.
    ///
    /// - Parameters:
    ///   - url: The database.
    ///   - timeout: How long connecting and asking may take together.
    ///   - logger: PostgresNIO's logger.
    /// - Throws: ``SyncSQLError`` naming the database (never the password) and what failed: the
    ///   server's own message (a refused password, a missing database), a failed connection, or no
    ///   answer within `timeout`.
    public static func inspect(url: PostgresURL, timeout: Duration, logger: Logger) async throws
        -> SchemaInspection
    {
        try await inspect(url: url, timeout: timeout, logger: logger) { inspection, _ in inspection }
    }

    /// Inspects a database as ``inspect(url:timeout:logger:)`` does, then runs `read` on the same
    /// connection before closing it, within the same `timeout` and the same read-only transaction
    /// (one snapshot; a write fails): for a read that depends on what the database holds (a count
    /// of rows, of an older schema's too, which ``migrate(_:logger:)`` would have migrated first).
    public static func inspect<Output: Sendable>(
        url: PostgresURL, timeout: Duration, logger: Logger,
        then read: @escaping @Sendable (SchemaInspection, PostgresConnection) async throws -> Output
    ) async throws -> Output {
        let servers: PostgresServers
        do {
            servers = try url.servers()
        } catch {
            throw SyncSQLError("\(url): \(error)")
        }
        let race = Race<Output>()
        do {
            return try await race.run(within: timeout) {
                let connection = try await servers.connect(id: 1, logger: logger).connection
                // Closed by the deadline once it passes, or here when it passed already.
                guard race.hold(connection) else {
                    try? await connection.close()
                    throw CancellationError()
                }
                do {
                    // One snapshot for the inspection and the read, and no write possible in it.
                    try await connection.query(
                        "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
                    let result = try await read(try await inspect(connection, logger: logger), connection)
                    try await connection.query("ROLLBACK", logger: logger)
                    try? await connection.close()
                    return result
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
        } catch let deadline as Race<Output>.DeadlinePassed {
            throw SyncSQLError("\(url): no answer within \(deadline.seconds) s")
        } catch let error as SyncSQLError {
            throw SyncSQLError("\(url): \(error.description)")
        } catch {
            throw SyncSQLError(describing: error, database: url)
        }
    }

    /// Which of the two schemas the database `connection` is to holds: its tables found by name as
    /// the backends find them (the connection's `search_path`), then the version tables read.
    public static func inspect(_ connection: PostgresConnection, logger: Logger) async throws
        -> SchemaInspection
    {
        let (store, service) = (SyncSchema.store, SyncSchema.service)
        // Fixed identifiers, bound as values all the same.
        let query: PostgresQuery = """
            SELECT to_regclass(\(store.versionTable)) IS NOT NULL, to_regclass(\(store.table.name)) IS NOT NULL,
                to_regclass(\(service.versionTable)) IS NOT NULL, to_regclass(\(service.table.name)) IS NOT NULL
            """
        var found: (storeVersion: Bool, store: Bool, serviceVersion: Bool, service: Bool)?
        for try await row in try await connection.query(query, logger: logger).decode((Bool, Bool, Bool, Bool).self) {
            found = row
        }
        guard let found else { throw SyncSQLError("the database did not say which tables it holds") }
        // Each version table's one row (as `migrate` reads it: none is version 0); a values table
        // without its version table is at version 0 too.
        func version(in table: String, present: Bool) -> String {
            present ? "coalesce((SELECT version FROM \(table) WHERE id = 1), 0)" : "NULL::integer"
        }
        var versions: (store: Int?, service: Int?) = (nil, nil)
        if found.storeVersion || found.serviceVersion {
            let sql =
                "SELECT \(version(in: store.versionTable, present: found.storeVersion)), "
                + version(in: service.versionTable, present: found.serviceVersion)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            for try await row in rows.decode((Int?, Int?).self) {
                versions = row
            }
        }
        return SchemaInspection(
            storeVersion: found.storeVersion || found.store ? versions.store ?? 0 : nil,
            serviceVersion: found.serviceVersion || found.service ? versions.service ?? 0 : nil)
    }
}

/// The first of an operation's result, its deadline and its caller's cancellation. The operation
/// runs in a task of its own, so that the caller is free even when it never ends (a PostgresNIO
/// query on a silent server is never completed nor cancellable); the connection it holds is closed
/// at the deadline.
private final class Race<Value: Sendable>: Sendable {
    struct DeadlinePassed: Error {
        let seconds: Double
    }

    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var outcome: Result<Value, any Error>?
        var tasks: [Task<Void, Never>] = []
        var connection: PostgresConnection?
    }

    private let state = Mutex(State())

    /// Keeps `connection` to close at the deadline; returns `false` when the deadline has passed.
    func hold(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            state.connection = connection
            return state.outcome == nil
        }
    }

    /// Returns what `operation` returns, or throws ``DeadlinePassed`` once `limit` has passed, or
    /// `CancellationError` when the caller is cancelled, whichever comes first.
    func run(within limit: Duration, _ operation: @escaping @Sendable () async throws -> Value) async throws
        -> Value
    {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let settled = state.withLock { state -> Result<Value, any Error>? in
                    if state.outcome == nil { state.continuation = continuation }
                    return state.outcome
                }
                if let settled {
                    continuation.resume(with: settled)
                    return
                }
                let work = Task {
                    do {
                        self.finish(.success(try await operation()))
                    } catch {
                        self.finish(.failure(error))
                    }
                }
                let timer = Task {
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    let (seconds, attoseconds) = limit.components
                    self.finish(.failure(DeadlinePassed(seconds: Double(seconds) + Double(attoseconds) / 1e18)))
                    if let connection = self.state.withLock({ $0.connection }) {
                        try? await connection.close()
                    }
                }
                let isSettled = state.withLock { state -> Bool in
                    if state.outcome == nil { state.tasks = [work, timer] }
                    return state.outcome != nil
                }
                if isSettled {
                    work.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    /// Settles the outcome, once: later calls change nothing.
    private func finish(_ outcome: Result<Value, any Error>) {
        let settled = state.withLock { state -> (CheckedContinuation<Value, any Error>?, [Task<Void, Never>])? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { (state.continuation, state.tasks) = (nil, []) }
            return (state.continuation, state.tasks)
        }
        guard let (continuation, tasks) = settled else { return }
        continuation?.resume(with: outcome)
        for task in tasks { task.cancel() }
    }
}

extension SyncSQLError {
    /// Describes an error of PostgresNIO's: the server's own message when it sent one (a refused
    /// password, a missing database), else what failed; PostgresNIO's own description is generic.
    init(describing error: any Error, database: PostgresURL) {
        guard let error = error as? PSQLError else {
            self.init("\(database): \(error)")
            return
        }
        if let message = error.serverInfo?[.message] {
            let code = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            self.init("\(database): the server refused: \(message)\(code)")
            return
        }
        switch error.code {
        case .connectionError:
            self.init("\(database): cannot connect: \(error.underlying.map { "\($0)" } ?? "connection failed")")
        case .serverClosedConnection, .uncleanShutdown:
            self.init("\(database): the server closed the connection")
        case .sslUnsupported:
            self.init("\(database): the server does not offer TLS, which the URL requires")
        case .authMechanismRequiresPassword:
            self.init("\(database): the server asks for a password and the URL gives none")
        default:
            self.init("\(database): \(error.code)")
        }
    }
}
