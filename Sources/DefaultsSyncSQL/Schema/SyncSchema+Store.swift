extension SyncSchema {
    /// The channel `PostgresSyncStore`'s table announces every change on, from a trigger of its
    /// schema: the payload is `md5(namespace) seq`, short and free of key names, so that any key
    /// fits PostgreSQL's 8000-byte payload limit.
    public static let storeChannel = "defaults_sync"

    /// `PostgresSyncStore`'s schema: ``SyncTable/store``, its version in `defaults_sync_schema`.
    public static let store = SyncSchema(
        table: .store, versionTable: "defaults_sync_schema",
        // `defaults` in ASCII: an arbitrary constant.
        lock: 0x6465_6661_756c_7473, migrations: storeMigrations, program: "swift-defaults")

    /// Migration `n` takes the schema from version `n` to `n + 1`. Fixed SQL, no input; released
    /// migrations never change.
    private static let storeMigrations: [[String]] = [
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
}
