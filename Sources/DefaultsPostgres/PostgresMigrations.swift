import Logging
import PostgresNIO

/// A schema's migrations and how they are applied: each once, in order, in one transaction under
/// an advisory lock, so that processes starting together migrate only once. A one-row table
/// holds the version reached. A database migrated by a newer program is refused, never touched.
///
/// Used by ``PostgresSyncStore`` and by `defaults-sync-server`, each with tables of its own.
public struct PostgresMigrations: Sendable {
    /// The table holding the version reached: a fixed identifier, never input.
    public let versionTable: String
    /// The advisory lock that serializes migrations across processes.
    public let lock: Int64
    /// Migration `n` takes the schema from version `n` to `n + 1`: fixed SQL statements, no input.
    public let migrations: [[String]]
    /// What to update when the database is newer, as a person would name it.
    public let program: String

    /// The version ``migrate(_:logger:)`` brings a database to.
    public var currentVersion: Int { migrations.count }

    /// Describes a schema's migrations.
    ///
    /// - Parameters:
    ///   - versionTable: The table that holds the version reached (a fixed identifier).
    ///   - lock: The advisory lock that serializes migrations across processes.
    ///   - migrations: Each migration's statements; migration `n` takes version `n` to `n + 1`.
    ///   - program: What to update when the database was migrated by a newer one.
    public init(versionTable: String, lock: Int64, migrations: [[String]], program: String) {
        self.versionTable = versionTable
        self.lock = lock
        self.migrations = migrations
        self.program = program
    }

    /// Brings the schema to ``currentVersion``.
    ///
    /// - Throws: ``PostgresSyncError`` when the database's schema is newer than ``currentVersion``,
    ///   or what PostgreSQL reports.
    public func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        let (versionTable, lock, migrations, program, currentVersion) = (
            versionTable, lock, migrations, program, currentVersion
        )
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: versionTable) (
                    id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)
                """, logger: logger)
            var version = 0
            let rows = try await connection.query(
                "SELECT version FROM \(unescaped: versionTable) WHERE id = 1", logger: logger)
            for try await stored in rows.decode(Int.self) {
                version = stored
            }
            guard version <= currentVersion else {
                throw PostgresSyncError(
                    "The database's schema (\(versionTable)) is version \(version), newer than this program's (\(currentVersion)): update \(program)"
                )
            }
            for migration in migrations[version...] {
                for statement in migration {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            if version < currentVersion {
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: versionTable) (id, version) VALUES (1, \(currentVersion))
                    ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version
                    """, logger: logger)
            }
        }
    }
}
