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
        ],
        // Numbers of each owner's own (one global sequence let a user count other tenants' writes
        // from the gaps in theirs), an unambiguous owner lock, the notifications' secret and the
        // revocations.
        [
            // Each owner's last number. A transaction sees every namespace of its user (to count
            // them) and writes only its own.
            """
            CREATE TABLE defaults_sync_service_heads (
                user_id text NOT NULL,
                namespace text NOT NULL,
                latest bigint NOT NULL,
                PRIMARY KEY (user_id, namespace)
            )
            """,
            // Existing owners go on from their highest number: a device's numbers never go back.
            // Row-level security would hide every row from this transaction, which declares no
            // owner: lifted for the one statement, restored before the migration commits.
            "ALTER TABLE defaults_sync_service_values NO FORCE ROW LEVEL SECURITY",
            """
            INSERT INTO defaults_sync_service_heads (user_id, namespace, latest)
            SELECT user_id, namespace, max(seq) FROM defaults_sync_service_values GROUP BY user_id, namespace
            """,
            "ALTER TABLE defaults_sync_service_values FORCE ROW LEVEL SECURITY",
            "ALTER TABLE defaults_sync_service_heads ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE defaults_sync_service_heads FORCE ROW LEVEL SECURITY",
            """
            CREATE POLICY defaults_sync_service_owner ON defaults_sync_service_heads
            USING (user_id = current_setting('defaults_sync.user', true))
            WITH CHECK (user_id = current_setting('defaults_sync.user', true)
                AND namespace = current_setting('defaults_sync.namespace', true))
            """,
            // The owner's lock, for the trigger and for ServiceStorage: its key names the owner
            // unambiguously (the user's length first: user `a` with namespace `b\nc` is not user
            // `a\nb` with namespace `c`).
            """
            CREATE FUNCTION defaults_sync_service_lock(user_id text, namespace text) RETURNS void
            LANGUAGE sql AS $$
                SELECT pg_advisory_xact_lock(hashtextextended(
                    'defaults_sync_service ' || octet_length(user_id) || ':' || user_id || namespace, 0))
            $$
            """,
            // A row that will meet its key's stored row takes no number on its insert: it takes one
            // on the update that follows, if it is later; so an owner's numbers have no gaps of
            // its own either.
            """
            CREATE OR REPLACE FUNCTION defaults_sync_service_number() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM defaults_sync_service_lock(NEW.user_id, NEW.namespace);
                IF TG_OP = 'INSERT' AND EXISTS (
                    SELECT 1 FROM defaults_sync_service_values
                    WHERE user_id = NEW.user_id AND namespace = NEW.namespace AND key = NEW.key
                ) THEN
                    RETURN NEW;
                END IF;
                INSERT INTO defaults_sync_service_heads AS head (user_id, namespace, latest)
                VALUES (NEW.user_id, NEW.namespace, 1)
                ON CONFLICT (user_id, namespace) DO UPDATE SET latest = head.latest + 1
                RETURNING latest INTO NEW.seq;
                RETURN NEW;
            END
            $$
            """,
            "DROP SEQUENCE defaults_sync_service_seq",
            // Removals expire: found by age.
            """
            CREATE INDEX defaults_sync_service_values_tombstones ON defaults_sync_service_values
                (user_id, namespace, updated_at) WHERE value IS NULL
            """,
            // The key that seals every notification (``AnnouncementSeal``): 384 bits of PostgreSQL's
            // strong random source (three version 4 UUIDs, 122 random bits each), drawn once, in
            // a table only this role may read: no grant to PUBLIC, none to anyone.
            """
            CREATE TABLE defaults_sync_service_secret (
                id integer PRIMARY KEY CHECK (id = 1),
                secret bytea NOT NULL
            )
            """,
            "REVOKE ALL ON defaults_sync_service_secret FROM PUBLIC",
            """
            INSERT INTO defaults_sync_service_secret (id, secret)
            SELECT 1, decode(replace(gen_random_uuid()::text || gen_random_uuid()::text
                || gen_random_uuid()::text, '-', ''), 'hex')
            """,
            // A user's tokens issued before `revoked_before` are refused (`defaults-sync-server revoke`).
            """
            CREATE TABLE defaults_sync_service_revocations (
                user_id text PRIMARY KEY,
                revoked_before timestamptz NOT NULL
            )
            """,
            "ALTER TABLE defaults_sync_service_revocations ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE defaults_sync_service_revocations FORCE ROW LEVEL SECURITY",
            """
            CREATE POLICY defaults_sync_service_owner ON defaults_sync_service_revocations
            USING (user_id = current_setting('defaults_sync.user', true))
            WITH CHECK (user_id = current_setting('defaults_sync.user', true))
            """,
        ],
    ]

    /// How the schema is brought up to date (`defaults_sync_service_schema` holds its version).
    static let migrator = PostgresMigrations(
        versionTable: "defaults_sync_service_schema", lock: migrationLock, migrations: migrations,
        program: "defaults-sync-server")

    /// The roles other than the server's (and superusers) that may connect to its database:
    /// `PUBLIC` when every role may. Row-level security does not reach notifications, and any
    /// role that connects may `LISTEN` and `NOTIFY`; the notifications are sealed, yet the
    /// service is best given a database of its own with `CONNECT` revoked from `PUBLIC`.
    static func otherRolesThatConnect(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        let rows = try await connection.query(
            """
            SELECT 'PUBLIC'::text WHERE has_database_privilege('public', current_database(), 'CONNECT')
            UNION ALL
            SELECT rolname::text FROM pg_roles
            WHERE rolcanlogin AND NOT rolsuper AND rolname <> current_user
                AND has_database_privilege(oid, current_database(), 'CONNECT')
                AND NOT has_database_privilege('public', current_database(), 'CONNECT')
            """, logger: logger)
        var roles: [String] = []
        for try await role in rows.decode(String.self) {
            roles.append(role)
        }
        return roles
    }

    /// Warns when roles other than the server's may connect to its database
    /// (``otherRolesThatConnect(_:logger:)``).
    static func warnOfOtherRoles(_ connection: PostgresConnection, logger: Logger) async throws {
        let roles = try await otherRolesThatConnect(connection, logger: logger)
        guard !roles.isEmpty else { return }
        let who =
            roles == ["PUBLIC"]
            ? "every role (PUBLIC)" : "the roles \(roles.sorted().map(\.debugDescription).joined(separator: ", "))"
        logger.warning(
            """
            \(who) may connect to the service's database, and so listen on its notification channel \
            and send on it (what they send is ignored: notifications are sealed), and hold the \
            advisory locks that order an owner's pushes (stalling them); give the service a \
            database of its own: REVOKE CONNECT ON DATABASE ... FROM PUBLIC
            """)
    }

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
