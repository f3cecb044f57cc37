import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The records of every user, in PostgreSQL. Each call runs in one transaction that first
/// declares its owner, so that row-level security (``ServiceSchema``) lets it touch nothing else.
/// The statements on the values are `DefaultsSyncSQL`'s (`SyncRows`), which `PostgresSyncStore`
/// runs too; the quotas, the tombstones' sweep and the announcement are the server's.
///
/// Every call waits for its user's share of the pool (``UserDatabaseShare``) before it takes a
/// pooled connection, and a push for its owner's turn (``OwnerTurns``) before that: one user's
/// requests never hold more of the pool than their share, nor wait in PostgreSQL for their own
/// owner's lock.
public final class ServiceStorage: Sendable {
    let pool: DatabasePool
    let limits: ServiceLimits
    let logger: Logger
    /// One push per owner at a time on this instance.
    let ownerTurns = OwnerTurns()
    /// The pooled connections each user's requests may hold.
    let userShare: UserDatabaseShare
    /// The most records one `changes` page holds.
    static let pageSize = 500
    /// The most stamps one `stamps` page holds, whatever the device asks.
    static let stampsPageSize = 1_000
    /// The key that seals notifications, read once from the database.
    private let cachedSeal = Mutex<AnnouncementSeal?>(nil)

    init(pool: DatabasePool, limits: ServiceLimits, userShare: UserDatabaseShare, logger: Logger) {
        self.pool = pool
        self.limits = limits
        self.userShare = userShare
        self.logger = logger
    }

    /// Runs `body` in a transaction of `owner`'s, on a pooled connection taken in the user's share;
    /// with `locking`, one that first takes the owner's lock (held until it ends), as every write
    /// does.
    private func transaction<Result: Sendable>(
        of owner: Owner, locking: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let (pool, logger) = (pool, logger)
        return try await userShare.withConnection(of: owner.user) {
            try await pool.withTransaction(logger: logger) { connection in
                // One round trip: declaring the owner and taking its lock (ServiceSchema's function,
                // the one the numbering trigger takes).
                var owner = owner.rows.ownerBindings
                owner.append(locking)
                for try await _ in try await connection.run(DeclareOwner.self, owner, logger: logger) {}
                return try await body(connection)
            }
        }
    }

    /// The key that seals notifications (``AnnouncementSeal``), read with `connection` the first time.
    func seal(on connection: PostgresConnection) async throws -> AnnouncementSeal {
        if let seal = cachedSeal.withLock({ $0 }) { return seal }
        let seal = try await AnnouncementSeal.read(on: connection, logger: logger)
        cachedSeal.withLock { $0 = seal }
        return seal
    }

    /// The owner's last number, 0 when it never had one.
    func latest(of owner: Owner) async throws -> Int64 {
        try await transaction(of: owner) { connection in
            try await self.latest(of: owner, on: connection)
        }
    }

    private func latest(of owner: Owner, on connection: PostgresConnection) async throws -> Int64 {
        try await owner.rows.latest(on: connection, logger: logger)
    }

    /// When the owner's user revoked their tokens issued before (``Revocation``), if ever.
    func revocation(of owner: Owner) async throws -> Revocation? {
        try await transaction(of: owner) { connection in
            var bindings = PostgresBindings()
            bindings.append(owner.user)
            for try await row in try await connection.run(UserRevocation.self, bindings, logger: self.logger) {
                return Revocation(user: owner.user, before: try row.decode(Int64.self))
            }
            return nil
        }
    }

    /// Every key's version, in the byte order of their names after `afterKey`; with `limit`, at
    /// most that many (and at most ``stampsPageSize``) and whether more follow.
    func stamps(of owner: Owner, afterKey: String?, limit: Int?) async throws -> (stamps: [WireStamp], more: Bool) {
        // A device older than paging asks for every stamp: the quotas bound how many there are.
        let pageSize = limit.map { min(max($0, 1), Self.stampsPageSize) } ?? Int(Int32.max)
        let after = afterKey?.utf8.contains(0) == true ? nil : afterKey
        return try await transaction(of: owner) { connection in
            let stamps = try await owner.rows.stamps(
                afterKey: after, limit: pageSize + 1, on: connection, logger: self.logger)
            guard stamps.count > pageSize else { return (stamps, false) }
            return (Array(stamps.prefix(pageSize)), true)
        }
    }

    /// The records of `keys` the owner has.
    func records(of owner: Owner, keys: [String]) async throws -> [WireRecord] {
        guard keys.contains(where: { !$0.utf8.contains(0) }) else { return [] }
        return try await transaction(of: owner) { connection in
            try await owner.rows.records(forKeys: keys, on: connection, logger: self.logger)
        }
    }

    /// The owner's changes numbered after `seq`, in order, at most ``pageSize``; whether more follow;
    /// and the number the answer reaches: its last record's, or with none the owner's latest (a
    /// device whose `seq` is beyond it learns that the numbers went back).
    func changes(of owner: Owner, after seq: Int64) async throws -> (records: [WireRecord], more: Bool, latest: Int64) {
        try await transaction(of: owner) { connection in
            let records = try await owner.rows.changes(
                after: seq, limit: Self.pageSize + 1, on: connection, logger: self.logger)
            let page = Array(records.prefix(Self.pageSize))
            if let last = page.last?.seq {
                return (page, records.count > Self.pageSize, last)
            }
            return (page, false, try await self.latest(of: owner, on: connection))
        }
    }

    /// Stores each record unless the owner has a later version of its key or it would go over a
    /// limit; returns the refused keys with why, and announces the change to every instance.
    ///
    /// A record PostgreSQL itself refuses (one the limits let through, yet too large for its
    /// index, say) is refused by name and the others stored: the push is tried again, once, with
    /// a savepoint around each record (`RefusedByDatabase.retrying`).
    func push(_ records: [WireRecord], of owner: Owner) async throws -> [String: String] {
        try await RefusedByDatabase.retrying { savepoints in
            try await push(records, of: owner, savepoints: savepoints)
        }
    }

    private func push(_ records: [WireRecord], of owner: Owner, savepoints: Bool) async throws -> [String: String] {
        // What no limit lets through is refused before the database is asked.
        var refused: [String: String] = [:]
        var candidates: [WireRecord] = []
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        for record in records {
            if let reason = RecordRefusal.reason(for: record, limits: limits, now: now) {
                refused[record.key] = reason
            } else {
                candidates.append(record)
            }
        }
        guard !candidates.isEmpty else { return refused }
        // The owner's turn on this instance, then its lock: the quota is counted and kept by one
        // push at a time, and no push waits for the lock holding a pooled connection (but one
        // through another instance).
        return try await ownerTurns.inTurn(of: owner) {
            try await storedInTransaction(candidates, refused: refused, of: owner, savepoints: savepoints)
        }
    }

    /// Stores `candidates` in one transaction holding the owner's lock, adding the refused ones to
    /// `refused`.
    private func storedInTransaction(
        _ candidates: [WireRecord], refused: [String: String], of owner: Owner, savepoints: Bool
    ) async throws -> [String: String] {
        try await transaction(of: owner, locking: true) { connection in
            var refused = refused
            var usage = try await self.usage(of: owner, keys: candidates.map(\.key), on: connection)
            // Expired removals still count until swept: swept here, under the owner's lock, and
            // counted again (a round trip saved on every push that has none).
            if usage.expiredRemovals > 0 {
                try await self.sweepTombstones(of: owner, on: connection)
                usage = try await self.usage(of: owner, keys: candidates.map(\.key), on: connection)
            }
            if let reason = try await self.namespaceRefusal(of: owner, usage: usage, on: connection) {
                for record in candidates { refused[record.key] = reason }
                return refused
            }
            var stored: [WireRecord] = []
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            // What to store, decided here by the same rules as the upsert's: the later of a key's
            // versions in this push, each within the quotas. By the key's bytes, as PostgreSQL
            // tells keys apart (Swift holds é written two ways equal).
            var decided: [Data: WireRecord] = [:]
            // Sorted by key, so that the rows lock in one order.
            for record in candidates.sorted(by: { $0.key < $1.key }) {
                // An older version is passed over, never refused: the device's is already beaten.
                guard usage.replacesStored(record, now: now) else { continue }
                if let reason = usage.quotaRefusal(of: record, limits: self.limits) {
                    refused[record.key] = reason
                    continue
                }
                if savepoints {
                    // One record at a time, so that what PostgreSQL refuses is refused alone.
                    do {
                        guard
                            let seq = try await owner.rows.store(
                                record, savepoint: true, on: connection, logger: self.logger)
                        else { continue }
                        var numbered = record
                        numbered.seq = seq
                        stored.append(numbered)
                    } catch let error as RefusedByDatabase {
                        refused[record.key] = error.description
                        continue
                    }
                } else {
                    decided[Data(record.key.utf8)] = record
                }
                usage.add(record)
            }
            if !decided.isEmpty {
                // One statement for the whole push.
                let records = decided.values.sorted { $0.key < $1.key }
                let numbers = Dictionary(
                    try await owner.rows.store(records, on: connection, logger: self.logger).map {
                        (Data($0.key.utf8), $0.seq)
                    }, uniquingKeysWith: max)
                stored = records.compactMap { record in
                    numbers[Data(record.key.utf8)].map { seq in
                        var numbered = record
                        numbered.seq = seq
                        return numbered
                    }
                }
                .sorted { ($0.seq ?? 0) < ($1.seq ?? 0) }
            }
            if let latest = stored.last?.seq {
                let announcement = Announcement(
                    tag: owner.tag, after: usage.latest, latest: latest,
                    committed: Int64(Date().timeIntervalSince1970 * 1000), records: stored)
                let payload = try await self.seal(on: connection).seal(announcement.payload)
                // Delivered at commit, once per push, to every instance.
                var bindings = PostgresBindings()
                bindings.append(ServiceSchema.channel)
                bindings.append(payload)
                for try await _ in try await connection.run(Announce.self, bindings, logger: self.logger) {}
            }
            return refused
        }
    }

    /// Forgets the owner's removals older than ``ServiceLimits/tombstoneDays`` (under its lock).
    private func sweepTombstones(of owner: Owner, on connection: PostgresConnection) async throws {
        var bindings = owner.rows.ownerBindings
        bindings.append(limits.tombstoneDays)
        for try await _ in try await connection.run(SweepTombstones.self, bindings, logger: logger) {}
    }

    /// Why a push to a namespace the user never wrote to is refused: they write to as many as
    /// they may. Counted again under a lock of the user's, held until the push commits, so that
    /// two new namespaces of one user are counted one after the other.
    private func namespaceRefusal(of owner: Owner, usage: Usage, on connection: PostgresConnection) async throws
        -> String?
    {
        guard !usage.hasHead else { return nil }
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended('defaults_sync_service user ' || \(owner.user), 0))",
            logger: logger)
        let rows = try await connection.query(
            "SELECT count(*) FROM defaults_sync_service_heads WHERE user_id = \(owner.user)", logger: logger)
        for try await namespaces in rows.decode(Int64.self) where namespaces >= limits.userNamespaces {
            return "quota: the user writes to \(namespaces) namespaces, the most they may is \(limits.userNamespaces)"
        }
        return nil
    }

    /// What the owner stores now (its keys, bytes and latest number) and the stored versions of `keys`, in one query.
    private func usage(of owner: Owner, keys: [String], on connection: PostgresConnection) async throws -> Usage {
        var usage = Usage()
        var bindings = owner.rows.ownerBindings
        bindings.append(keys)
        bindings.append(limits.tombstoneDays)
        let rows = try await connection.run(OwnerUsage.self, bindings, logger: logger)
        for try await row in rows {
            let (keys, bytes, expired, latest, key, size, wall, counter, origin) = try row.decode(
                (Int64, Int64, Int64, Int64?, String?, Int64?, Int64?, Int64?, String?).self)
            (usage.keys, usage.bytes, usage.latest, usage.hasHead) = (Int(keys), Int(bytes), latest ?? 0, latest != nil)
            usage.expiredRemovals = Int(expired)
            if let key, let size, let wall, let counter, let origin {
                usage.stored[key] = (Int(size), WireStamp(key: key, wall: wall, counter: counter, origin: origin))
            }
        }
        return usage
    }
}

/// An owner's keys and bytes during one push, to hold it to the quotas.
struct Usage {
    /// Keys stored, removals included (expired ones until swept).
    var keys = 0
    /// Removals older than ``ServiceLimits/tombstoneDays``, to sweep before the quotas are counted.
    var expiredRemovals = 0
    /// Bytes stored: each key's name, value and origin (``rowBytes(_:)``).
    var bytes = 0
    /// The owner's last number before the push.
    var latest: Int64 = 0
    /// Whether the owner was ever numbered (its user writes to its namespace already).
    var hasHead = false
    /// The bytes of each pushed key's stored row and its version.
    var stored: [String: (size: Int, stamp: WireStamp)] = [:]

    /// What a stored row counts against the namespace's bytes, in SQL over the table `alias`.
    static func rowBytes(_ alias: String) -> String {
        "(octet_length(\(alias).key) + coalesce(octet_length(\(alias).value), 0) + octet_length(\(alias).clock_origin))::bigint"
    }

    /// What `record` counts against the namespace's bytes, as ``rowBytes(_:)`` counts it stored.
    static func bytes(of record: WireRecord) -> Int {
        record.key.utf8.count + (record.value?.count ?? 0) + record.origin.utf8.count
    }

    /// Why storing `record` would take the namespace over a quota, or `nil`. A change that grows
    /// nothing passes even over a quota (one lowered since, say), so that a user can always remove.
    func quotaRefusal(of record: WireRecord, limits: ServiceLimits) -> String? {
        let previous = stored[record.key]?.size
        let keysAfter = keys + (previous == nil ? 1 : 0)
        if keysAfter > limits.namespaceKeys, keysAfter > keys {
            return "quota: the namespace holds \(keys) keys, the most it may hold is \(limits.namespaceKeys)"
        }
        let bytesAfter = bytes - (previous ?? 0) + Self.bytes(of: record)
        if bytesAfter > limits.namespaceBytes, bytesAfter > bytes {
            return "quota: storing it would make \(bytesAfter) bytes, over the namespace's \(limits.namespaceBytes)"
        }
        return nil
    }

    /// Whether `record` replaces the stored version of its key (or there is none), by the
    /// upsert's rule (`WireVersion.replaces(_:now:)`).
    func replacesStored(_ record: WireRecord, now: Int64) -> Bool {
        guard let stamp = stored[record.key]?.stamp else { return true }
        return record.version.replaces(stamp.version, now: now)
    }

    mutating func add(_ record: WireRecord) {
        let previous = stored[record.key]?.size
        keys += previous == nil ? 1 : 0
        bytes += Self.bytes(of: record) - (previous ?? 0)
        stored[record.key] = (
            Self.bytes(of: record),
            WireStamp(key: record.key, wall: record.wall, counter: record.counter, origin: record.origin)
        )
    }
}
