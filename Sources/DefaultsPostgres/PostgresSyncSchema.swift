import PostgresNIO

/// The tables of the sync store, created and migrated by the store itself.
///
/// `defaults_sync_schema` holds the schema version; each migration runs once, in order, in one
/// transaction under an advisory lock, so that processes starting together migrate only once.
enum PostgresSyncSchema {
    /// The channel every change is announced on; the payload is `md5(namespace) seq`, short and
    /// free of key names, so that any key fits PostgreSQL's 8000-byte payload limit.
    static let channel = "defaults_sync"

    /// Serializes migrations across processes (an arbitrary constant, `defaults` in ASCII).
    static let migrationLock: Int64 = 0x6465_6661_756c_7473

    /// Migration `n` takes the schema from version `n` to `n + 1`. Fixed SQL, no input.
    static let migrations: [[String]] = [
        [
            "CREATE SEQUENCE defaults_sync_seq",
            """
            CREATE TABLE defaults_sync_values (
                namespace text NOT NULL,
                key text NOT NULL,
                value bytea,
                clock_wall bigint NOT NULL,
                clock_counter bigint NOT NULL,
                clock_origin text COLLATE "C" NOT NULL,
                seq bigint NOT NULL DEFAULT nextval('defaults_sync_seq'),
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (namespace, key)
            )
            """,
            """
            CREATE FUNCTION defaults_sync_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('defaults_sync', md5(NEW.namespace) || ' ' || NEW.seq);
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER defaults_sync_notify AFTER INSERT OR UPDATE ON defaults_sync_values
            FOR EACH ROW EXECUTE FUNCTION defaults_sync_notify()
            """,
        ],
        // A notification fetches the namespace's changes from its sequence number on.
        ["CREATE INDEX defaults_sync_values_seq ON defaults_sync_values (namespace, seq)"],
        // A namespace's sequence numbers follow the order its changes commit in: a row takes its
        // number holding a lock of its namespace until its transaction ends. Whoever has seen
        // number n has seen every change of the namespace up to n, so a reconnection fetches
        // only the changes after the last number seen.
        [
            """
            CREATE FUNCTION defaults_sync_number() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(hashtextextended('defaults_sync ' || NEW.namespace, 0));
                NEW.seq := nextval('defaults_sync_seq');
                RETURN NEW;
            END
            $$
            """,
            """
            CREATE TRIGGER defaults_sync_number BEFORE INSERT OR UPDATE ON defaults_sync_values
            FOR EACH ROW EXECUTE FUNCTION defaults_sync_number()
            """,
        ],
    ]

    static var currentVersion: Int { migrations.count }

    /// Brings the schema to ``currentVersion``; refuses a database migrated by a newer library.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS defaults_sync_schema (
                    id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)
                """, logger: logger)
            var version = 0
            let rows = try await connection.query(
                "SELECT version FROM defaults_sync_schema WHERE id = 1", logger: logger)
            for try await stored in rows.decode(Int.self) {
                version = stored
            }
            guard version <= currentVersion else {
                throw PostgresSyncError(
                    "The database's sync schema is version \(version), newer than this library's (\(currentVersion)): update swift-defaults"
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
                    INSERT INTO defaults_sync_schema (id, version) VALUES (1, \(currentVersion))
                    ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version
                    """, logger: logger)
            }
        }
    }
}
