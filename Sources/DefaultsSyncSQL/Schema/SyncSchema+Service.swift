extension SyncSchema {
    /// The values part of the sync service's schema: ``SyncTable/service`` and its numbering, its
    /// version in `defaults_sync_service_schema`. The server adds its own statements to each
    /// migration (row-level security, the notifications' secret, the revocations) with
    /// ``adding(_:program:)``; the version counts both.
    public static let service = SyncSchema(
        table: .service, versionTable: "defaults_sync_service_schema",
        // `dsyncsrv` in ASCII: an arbitrary constant.
        lock: 0x6473_796e_6373_7276, migrations: serviceMigrations, program: "defaults-sync-server")

    /// Migration `n` takes the values part from version `n` to `n + 1`. Fixed SQL, no input;
    /// released migrations never change.
    private static let serviceMigrations: [[String]] = [
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
        ],
        // Numbers of each owner's own (one global sequence let a user count other tenants' writes
        // from the gaps in theirs) and an unambiguous owner lock.
        [
            // Each owner's last number.
            """
            CREATE TABLE defaults_sync_service_heads (
                user_id text NOT NULL,
                namespace text NOT NULL,
                latest bigint NOT NULL,
                PRIMARY KEY (user_id, namespace)
            )
            """,
            // Existing owners go on from their highest number: a device's numbers never go back.
            // The server forces row-level security on the values (its migration 0), which would
            // hide every row from this transaction, which declares no owner: lifted for the one
            // statement; the server forces it again in this migration, before it commits.
            "ALTER TABLE defaults_sync_service_values NO FORCE ROW LEVEL SECURITY",
            """
            INSERT INTO defaults_sync_service_heads (user_id, namespace, latest)
            SELECT user_id, namespace, max(seq) FROM defaults_sync_service_values GROUP BY user_id, namespace
            """,
            // The owner's lock, for the trigger and for the server's pushes: its key names the
            // owner unambiguously (the user's length first: user `a` with namespace `b\nc` is not
            // user `a\nb` with namespace `c`).
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
        ],
    ]
}
