import DefaultsSyncProtocol
import Foundation
import Logging
import PostgresNIO

/// The records of every user, in PostgreSQL. Each call runs in one transaction that first
/// declares its owner, so that row-level security (``ServiceSchema``) lets it touch nothing else.
public final class ServiceStorage: Sendable {
    let client: PostgresClient
    let limits: ServiceLimits
    let logger: Logger
    /// The most records one `changes` page holds.
    static let pageSize = 500

    init(client: PostgresClient, limits: ServiceLimits, logger: Logger) {
        self.client = client
        self.limits = limits
        self.logger = logger
    }

    /// Runs `body` in a transaction of `owner`'s; with `locking`, one that first takes the owner's
    /// lock (held until it ends), as every write does.
    private func transaction<Result: Sendable>(
        of owner: Owner, locking: Bool = false, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            // One round trip: declaring the owner and taking its lock.
            try await connection.query(
                """
                SELECT set_config('defaults_sync.user', \(owner.user), true),
                    set_config('defaults_sync.namespace', \(owner.namespace), true),
                    CASE WHEN \(locking) THEN pg_advisory_xact_lock(hashtextextended(
                        'defaults_sync_service ' || \(owner.user) || chr(10) || \(owner.namespace), 0)) END
                """, logger: logger)
            return try await body(connection)
        }
    }

    /// The owner's highest sequence number, 0 when it holds no record.
    func latest(of owner: Owner) async throws -> Int64 {
        try await transaction(of: owner) { connection in
            try await self.latest(of: owner, on: connection)
        }
    }

    private func latest(of owner: Owner, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query(
            """
            SELECT coalesce(max(seq), 0) FROM defaults_sync_service_values
            WHERE user_id = \(owner.user) AND namespace = \(owner.namespace)
            """, logger: logger)
        for try await latest in rows.decode(Int64.self) {
            return latest
        }
        return 0
    }

    /// Every key's version.
    func stamps(of owner: Owner) async throws -> [WireStamp] {
        try await transaction(of: owner) { connection in
            let rows = try await connection.query(
                """
                SELECT key, clock_wall, clock_counter, clock_origin FROM defaults_sync_service_values
                WHERE user_id = \(owner.user) AND namespace = \(owner.namespace)
                """, logger: self.logger)
            var stamps: [WireStamp] = []
            for try await (key, wall, counter, origin) in rows.decode((String, Int64, Int64, String).self) {
                stamps.append(WireStamp(key: key, wall: wall, counter: counter, origin: origin))
            }
            return stamps
        }
    }

    /// The records of `keys` the owner has.
    func records(of owner: Owner, keys: [String]) async throws -> [WireRecord] {
        let names = keys.filter { !$0.utf8.contains(0) }
        guard !names.isEmpty else { return [] }
        return try await transaction(of: owner) { connection in
            try await self.select(
                "WHERE user_id = \(owner.user) AND namespace = \(owner.namespace) AND key = ANY(\(names))",
                on: connection)
        }
    }

    /// The owner's changes numbered after `seq`, in order, at most ``pageSize``; whether more follow;
    /// and the number the answer reaches: its last record's, or with none the owner's latest (a
    /// device whose `seq` is beyond it learns that the numbers went back).
    func changes(of owner: Owner, after seq: Int64) async throws -> (records: [WireRecord], more: Bool, latest: Int64) {
        try await transaction(of: owner) { connection in
            let limit = Self.pageSize + 1
            let records = try await self.select(
                """
                WHERE user_id = \(owner.user) AND namespace = \(owner.namespace) AND seq > \(seq)
                ORDER BY seq LIMIT \(limit)
                """, on: connection)
            let page = Array(records.prefix(Self.pageSize))
            if let last = page.last?.seq {
                return (page, records.count > Self.pageSize, last)
            }
            return (page, false, try await self.latest(of: owner, on: connection))
        }
    }

    private func select(_ condition: PostgresQuery, on connection: PostgresConnection) async throws -> [WireRecord] {
        // A fixed column list before the caller's parameterized condition.
        let query = PostgresQuery(
            unsafeSQL:
                "SELECT key, value, clock_wall, clock_counter, clock_origin, seq FROM defaults_sync_service_values "
                + condition.sql,
            binds: condition.binds)
        var records: [WireRecord] = []
        for try await (key, value, wall, counter, origin, seq) in try await connection.query(query, logger: logger)
            .decode((String, Data?, Int64, Int64, String, Int64).self)
        {
            records.append(WireRecord(key: key, value: value, wall: wall, counter: counter, origin: origin, seq: seq))
        }
        return records
    }

    /// Stores each record unless the owner has a later version of its key or it would go over a
    /// limit; returns the refused keys with why, and announces the change to every instance.
    func push(_ records: [WireRecord], of owner: Owner) async throws -> [String: String] {
        // The owner's lock first: the quota is counted and kept by one push at a time.
        try await transaction(of: owner, locking: true) { connection in
            var usage = try await self.usage(of: owner, keys: records.map(\.key), on: connection)
            var refused: [String: String] = [:]
            var stored: [WireRecord] = []
            // Sorted by key, so that the rows lock in one order.
            for record in records.sorted(by: { $0.key < $1.key }) {
                // An older version is passed over, never refused: the device's is already beaten.
                guard usage.isNewer(record) else { continue }
                if let reason = usage.refusal(of: record, limits: self.limits) {
                    refused[record.key] = reason
                    continue
                }
                guard let seq = try await self.store(record, of: owner, on: connection) else { continue }
                var numbered = record
                numbered.seq = seq
                usage.add(record)
                stored.append(numbered)
            }
            if let latest = stored.last?.seq {
                let announcement = Announcement(
                    tag: owner.tag, after: usage.latest, latest: latest,
                    committed: Int64(Date().timeIntervalSince1970 * 1000), records: stored)
                // Delivered at commit, once per push, to every instance.
                try await connection.query(
                    "SELECT pg_notify(\(ServiceSchema.channel), \(announcement.payload))", logger: self.logger)
            }
            return refused
        }
    }

    /// Stores `record` unless the stored version is as late, and returns the number it took.
    private func store(_ record: WireRecord, of owner: Owner, on connection: PostgresConnection) async throws -> Int64?
    {
        let rows = try await connection.query(
            """
            INSERT INTO defaults_sync_service_values AS stored
                (user_id, namespace, key, value, clock_wall, clock_counter, clock_origin, seq)
            VALUES (\(owner.user), \(owner.namespace), \(record.key), \(record.value), \(record.wall), \
            \(record.counter), \(record.origin), 0)
            ON CONFLICT (user_id, namespace, key) DO UPDATE SET
                value = EXCLUDED.value, clock_wall = EXCLUDED.clock_wall,
                clock_counter = EXCLUDED.clock_counter, clock_origin = EXCLUDED.clock_origin,
                updated_at = now()
            WHERE (EXCLUDED.clock_wall, EXCLUDED.clock_counter, EXCLUDED.clock_origin)
                > (stored.clock_wall, stored.clock_counter, stored.clock_origin)
            RETURNING seq
            """, logger: logger)
        for try await seq in rows.decode(Int64.self) {
            return seq
        }
        return nil
    }

    /// What the owner stores now (its keys, bytes and latest number) and the stored versions of
    /// `keys`, in one query.
    private func usage(of owner: Owner, keys: [String], on connection: PostgresConnection) async throws -> Usage {
        var usage = Usage()
        let names = keys.filter { !$0.utf8.contains(0) }
        let rows = try await connection.query(
            """
            SELECT totals.keys, totals.bytes, totals.latest,
                stored.key, octet_length(stored.value), stored.clock_wall, stored.clock_counter, stored.clock_origin
            FROM (
                SELECT count(value) AS keys, coalesce(sum(octet_length(value)), 0)::bigint AS bytes,
                    coalesce(max(seq), 0) AS latest
                FROM defaults_sync_service_values
                WHERE user_id = \(owner.user) AND namespace = \(owner.namespace)
            ) AS totals
            LEFT JOIN defaults_sync_service_values AS stored
                ON stored.user_id = \(owner.user) AND stored.namespace = \(owner.namespace) AND stored.key = ANY(\(names))
            """, logger: logger)
        for try await (keys, bytes, latest, key, size, wall, counter, origin) in rows.decode(
            (Int64, Int64, Int64, String?, Int32?, Int64?, Int64?, String?).self)
        {
            (usage.keys, usage.bytes, usage.latest) = (Int(keys), Int(bytes), latest)
            if let key, let wall, let counter, let origin {
                usage.stored[key] = (
                    size.map(Int.init), WireStamp(key: key, wall: wall, counter: counter, origin: origin)
                )
            }
        }
        return usage
    }
}

/// An owner's keys and bytes during one push, to hold it to the quotas.
struct Usage {
    var keys = 0
    var bytes = 0
    /// The owner's last number before the push.
    var latest: Int64 = 0
    /// The size of each pushed key's stored value (`nil`: removed) and its version.
    var stored: [String: (size: Int?, stamp: WireStamp)] = [:]

    /// Why `record` cannot be stored, or `nil` when it can.
    func refusal(of record: WireRecord, limits: ServiceLimits) -> String? {
        if record.key.utf8.contains(0) { return "a key name cannot hold a NUL character" }
        guard let size = record.value?.count else { return nil }
        if size > limits.valueBytes {
            return "the value is \(size) bytes, over the limit of \(limits.valueBytes) bytes per value"
        }
        let previous = stored[record.key]?.size
        let keysAfter = keys + (previous == nil ? 1 : 0)
        if keysAfter > limits.namespaceKeys {
            return "quota: the namespace holds \(keys) keys, the most it may hold is \(limits.namespaceKeys)"
        }
        let bytesAfter = bytes - (previous ?? 0) + size
        if bytesAfter > limits.namespaceBytes {
            return "quota: storing it would make \(bytesAfter) bytes, over the namespace's \(limits.namespaceBytes)"
        }
        return nil
    }

    /// Whether `record` is later than the stored version of its key (or there is none).
    func isNewer(_ record: WireRecord) -> Bool {
        guard let stamp = stored[record.key]?.stamp else { return true }
        if record.wall != stamp.wall { return record.wall > stamp.wall }
        if record.counter != stamp.counter { return record.counter > stamp.counter }
        return stamp.origin.utf8.lexicographicallyPrecedes(record.origin.utf8)
    }

    mutating func add(_ record: WireRecord) {
        let previous = stored[record.key]?.size
        keys += (record.value != nil ? 1 : 0) - (previous != nil ? 1 : 0)
        bytes += (record.value?.count ?? 0) - (previous ?? 0)
        stored[record.key] = (
            record.value?.count,
            WireStamp(key: record.key, wall: record.wall, counter: record.counter, origin: record.origin)
        )
    }
}
