import DefaultsSyncSQL

// The statements every push runs (``ServiceStorage``), and the one every device's arrival runs,
// prepared once on each pooled connection (``FixedStatement``). Their placeholders are bound in
// the order their comments give, the owner's first (`SyncRows.ownerBindings`: user, namespace).

/// Declares the transaction's owner for row-level security and, when `$3`, takes the owner's lock
/// (the numbering trigger's, ``ServiceSchema``) in the same round trip: `$1` user, `$2`
/// namespace, `$3` whether to lock.
enum DeclareOwner: FixedStatement {
    static let sql = """
        SELECT set_config('defaults_sync.user', $1, true), set_config('defaults_sync.namespace', $2, true),
            CASE WHEN $3 THEN defaults_sync_service_lock($1, $2) END
        """
}

/// Forgets the owner's removals older than `$3` days: `$1` user, `$2` namespace.
enum SweepTombstones: FixedStatement {
    static let sql = """
        DELETE FROM defaults_sync_service_values AS swept
        WHERE user_id = $1 AND namespace = $2 AND \(expired("swept", days: "$3"))
        """

    /// Whether the row `alias` is a removal older than the days bound at `placeholder`: what the
    /// sweep forgets, and ``OwnerUsage`` counts so that a push sweeps only when there is any.
    static func expired(_ alias: String, days placeholder: String) -> String {
        "\(alias).value IS NULL AND \(alias).updated_at < now() - make_interval(days => \(placeholder)::integer)"
    }
}

/// What the owner stores (its keys, bytes, removals to sweep and head) and the stored versions of
/// the keys `$3` (a text array), one row per key found: `$1` user, `$2` namespace, `$4` the days a
/// removal is kept (``SweepTombstones``).
enum OwnerUsage: FixedStatement {
    static let sql = """
        SELECT totals.keys, totals.bytes, totals.expired, head.latest,
            stored.key, \(Usage.rowBytes("stored")), stored.clock_wall, stored.clock_counter, stored.clock_origin
        FROM (
            SELECT count(*) AS keys, coalesce(sum(\(Usage.rowBytes("counted"))), 0)::bigint AS bytes,
                count(*) FILTER (WHERE \(SweepTombstones.expired("counted", days: "$4"))) AS expired
            FROM defaults_sync_service_values AS counted
            WHERE user_id = $1 AND namespace = $2
        ) AS totals
        LEFT JOIN defaults_sync_service_heads AS head ON head.user_id = $1 AND head.namespace = $2
        LEFT JOIN defaults_sync_service_values AS stored
            ON stored.user_id = $1 AND stored.namespace = $2 AND stored.key = ANY($3::text[])
        """
}

/// Sends `$2` (a sealed ``Announcement``) on the channel `$1`, delivered at commit.
enum Announce: FixedStatement {
    static let sql = "SELECT pg_notify($1, $2)"
}

/// When user `$1` revoked their tokens issued before, in seconds since 1970 (``Revocation``): read
/// as each device connects.
enum UserRevocation: FixedStatement {
    static let sql = """
        SELECT floor(extract(epoch FROM revoked_before))::bigint FROM defaults_sync_service_revocations
        WHERE user_id = $1
        """
}
