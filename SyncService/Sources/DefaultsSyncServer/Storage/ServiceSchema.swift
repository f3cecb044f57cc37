import DefaultsSyncSQL
import Logging
import PostgresNIO

/// The service's tables, created and migrated by the server at start: the values table, its
/// heads and numbering are `DefaultsSyncSQL`'s (`SyncSchema.service`, `SyncTable.service`); row-level
/// security, the notifications' secret and the revocations are the server's own.
///
/// Every row belongs to one user and one namespace, and row-level security lets a transaction see
/// and change only the rows of the user and namespace it declared (``ServiceStorage``): a second
/// wall behind the token check, should a query ever forget its `WHERE`. It holds for the table's
/// owner too (`FORCE`); only a superuser or a role with `BYPASSRLS` passes it, and the server
/// warns when it connects as one.
enum ServiceSchema {
    /// Every committed push announces itself on this channel (``Announcement``).
    static let channel = "defaults_sync_service"

    /// The server's own statements, run after the values part's (`SyncSchema.service`) in the
    /// same migration: migration `n` takes the whole schema from version `n` to `n + 1`. Fixed
    /// SQL, no input; released migrations never change.
    static let ownMigrations: [[String]] = [
        [
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
        // The heads' row-level security, the notifications' secret and the revocations (the
        // values part numbers each owner's own and lifts the values' FORCE to count them).
        [
            "ALTER TABLE defaults_sync_service_values FORCE ROW LEVEL SECURITY",
            // A transaction sees every namespace of its user (to count them) and writes only its own.
            "ALTER TABLE defaults_sync_service_heads ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE defaults_sync_service_heads FORCE ROW LEVEL SECURITY",
            """
            CREATE POLICY defaults_sync_service_owner ON defaults_sync_service_heads
            USING (user_id = current_setting('defaults_sync.user', true))
            WITH CHECK (user_id = current_setting('defaults_sync.user', true)
                AND namespace = current_setting('defaults_sync.namespace', true))
            """,
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
        // The directory of nodes (``NodeDirectory``): read in the instance's own database, and
        // used when tokens name a node.
        NodeDirectory.migration,
    ]

    /// How the whole schema is brought up to date (`defaults_sync_service_schema` holds its
    /// version): the values part, then the server's own, in each migration.
    static let migrator = SyncSchema.service.adding(ownMigrations, program: "defaults-sync-server")

    /// A connection to the primary of the database at `databaseURL`, its schema brought up to
    /// date: what the operator's commands (`revoke`, `nodes`) work on.
    static func connectMigrated(to databaseURL: String, logger: Logger) async throws -> PostgresConnection {
        let database = try PostgresURL(databaseURL)
        let connection: PostgresConnection
        do {
            connection = try await database.servers().connect(id: 0, logger: logger).connection
        } catch {
            throw ServiceStorageError("cannot connect to \(database): \(String(reflecting: error))")
        }
        do {
            try await migrator.migrate(connection, logger: logger)
            return connection
        } catch {
            try? await connection.close()
            throw error
        }
    }

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
