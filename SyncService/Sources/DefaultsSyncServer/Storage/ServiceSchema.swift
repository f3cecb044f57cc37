import DefaultsPostgres
import Logging
import PostgresNIO

/// The service's tables, created and migrated by the server at start.
///
/// Every row belongs to one user and one namespace, and row-level security lets a transaction see
/// and change only the rows of the user and namespace it declared (``ServiceStorage``): a second
/// wall behind the token check, should a query ever forget its `WHERE`. It holds for the table's
/// owner too (`FORCE`); only a superuser or a role with `BYPASSRLS` passes it, and the server
/// warns when it connects as one.
enum ServiceSchema {
    /// Every committed push announces itself on this channel (``Announcement``).
    static let channel = "defaults_sync_service"

    /// Serializes migrations across instances starting together (`dsyncsrv` in ASCII).
    static let migrationLock: Int64 = 0x6473_796e_6373_7276

    /// Migration `n` takes the schema from version `n` to `n + 1`. Fixed SQL, no input.
    static let migrations: [[String]] = [
        [
            "CREATE SEQUENCE defaults_sync_service_seq",
            """
            CREATE TABLE defaults_sync_service_values (
                user_id text NOT NULL,
                namespace text NOT NULL,
                key text NOT NULL,
                value bytea,
                clock_wall bigint NOT NULL,
                clock_counter bigint NOT NULL,
                clock_origin text COLLATE "C" NOT NULL,
                seq bigint NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, namespace, key)
            )
            """,
            "CREATE INDEX defaults_sync_service_values_seq ON defaults_sync_service_values (user_id, namespace, seq)",
            // A user's namespace numbers its changes in commit order: a row takes its number
            // holding the owner's lock until its transaction ends (pushes take it first).
            """
            CREATE FUNCTION defaults_sync_service_number() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(
                    hashtextextended('defaults_sync_service ' || NEW.user_id || chr(10) || NEW.namespace, 0));
                NEW.seq := nextval('defaults_sync_service_seq');
                RETURN NEW;
            END
            $$
            """,
            """
            CREATE TRIGGER defaults_sync_service_number BEFORE INSERT OR UPDATE ON defaults_sync_service_values
            FOR EACH ROW EXECUTE FUNCTION defaults_sync_service_number()
            """,
            "ALTER TABLE defaults_sync_service_values ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE defaults_sync_service_values FORCE ROW LEVEL SECURITY",
            """
            CREATE POLICY defaults_sync_service_owner ON defaults_sync_service_values
            USING (user_id = current_setting('defaults_sync.user', true)
                AND namespace = current_setting('defaults_sync.namespace', true))
            WITH CHECK (user_id = current_setting('defaults_sync.user', true)
                AND namespace = current_setting('defaults_sync.namespace', true))
            """,
        ]
    ]

    /// How the schema is brought up to date (`defaults_sync_service_schema` holds its version).
    static let migrator = PostgresMigrations(
        versionTable: "defaults_sync_service_schema", lock: migrationLock, migrations: migrations,
        program: "defaults-sync-server")

    /// Whether the server's role passes row-level security (a superuser or `BYPASSRLS`).
    static func bypassesRowSecurity(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user", logger: logger)
        for try await bypasses in rows.decode(Bool.self) {
            return bypasses
        }
        return false
    }
}

/// A database problem, described without credentials.
struct ServiceStorageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
