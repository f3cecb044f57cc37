import Logging
import PostgresNIO

/// A values table's schema and its migrations, applied each once, in order, in one transaction
/// under an advisory lock, so that processes starting together migrate only once. A one-row
/// table holds the version reached. A database migrated by a newer program is refused, never
/// touched.
///
/// Migrations are history: migration `n` takes version `n` to `n + 1`, and a database at any
/// version goes on from it, so a migration, once released, never changes; a change is a new one.
/// ``store`` is `PostgresSyncStore`'s schema; ``service`` the values part of the sync service's,
/// which the server extends with tables of its own (``adding(_:program:)``).
public struct SyncSchema: Sendable {
    /// The values table the schema holds.
    public let table: SyncTable
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

    /// Describes a schema.
    ///
    /// - Parameters:
    ///   - table: The values table.
    ///   - versionTable: The table that holds the version reached (a fixed identifier).
    ///   - lock: The advisory lock that serializes migrations across processes.
    ///   - migrations: Each migration's statements; migration `n` takes version `n` to `n + 1`.
    ///   - program: What to update when the database was migrated by a newer one.
    public init(table: SyncTable, versionTable: String, lock: Int64, migrations: [[String]], program: String) {
        self.table = table
        self.versionTable = versionTable
        self.lock = lock
        self.migrations = migrations
        self.program = program
    }

    /// This schema with a program's own statements: migration `n` runs this schema's statements
    /// of migration `n`, then `statements[n]`, in its one transaction, so a database at any
    /// version, fresh or not, goes on from it. `statements` may hold more migrations than this
    /// schema (they run alone), or fewer.
    public func adding(_ statements: [[String]], program: String) -> SyncSchema {
        let count = max(migrations.count, statements.count)
        let merged = (0..<count).map { index in
            (index < migrations.count ? migrations[index] : [])
                + (index < statements.count ? statements[index] : [])
        }
        return SyncSchema(
            table: table, versionTable: versionTable, lock: lock, migrations: merged, program: program)
    }

    /// Brings the schema to ``currentVersion``.
    ///
    /// - Throws: ``SyncSQLError`` when the database's schema is newer than ``currentVersion``, or
    ///   what PostgreSQL reports.
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
                throw SyncSQLError(
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
