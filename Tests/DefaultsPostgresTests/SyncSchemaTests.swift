import DefaultsPostgres
import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Logging
import PostgresNIO
import Synchronization
import TestSupport
import Testing

/// The SQL layer both PostgreSQL backends share (`DefaultsSyncSQL`): databases an older release
/// left go on from their version, the upsert keeps the later version, a record PostgreSQL refuses
/// is refused alone.
@Suite("The shared SQL layer", .enabled(if: PostgresCluster.isAvailable), .mayBlock)
struct SyncSchemaTests {
    let logger = Logger(label: "test")

    /// A connection as the test's role to a database of its own, `name`, created empty.
    func connection(to name: String, on cluster: PostgresCluster) async throws -> PostgresConnection {
        try cluster.query("CREATE DATABASE \(name) OWNER defaults")
        let url = cluster.url.replacingOccurrences(of: "/defaults_sync?", with: "/\(name)?")
        return try await PostgresConnection.connect(
            configuration: PostgresSyncStore.configuration(url: url), id: 1, logger: logger)
    }

    func record(_ key: String, wall: Int64, value: String = "v") -> WireRecord {
        WireRecord(key: key, value: Data(value.utf8), wall: wall, counter: 0, origin: "test")
    }

    /// Stores `records` in one transaction, as the backends push, refused ones set aside.
    func push(_ records: [WireRecord], to rows: SyncRows, on connection: PostgresConnection) async throws
        -> [String: String]
    {
        let logger = logger
        return try await RefusedByDatabase.retrying { savepoints in
            try await connection.withTransaction(logger: logger) { connection in
                var refused: [String: String] = [:]
                for record in records {
                    do {
                        _ = try await rows.store(record, savepoint: savepoints, on: connection, logger: logger)
                    } catch let refusal as RefusedByDatabase where savepoints {
                        refused[record.key] = refusal.description
                    }
                }
                return refused
            }
        }
    }

    @Test(arguments: 1..<SyncSchema.store.currentVersion)
    func aStoreDatabaseAnOlderReleaseLeftGoesOnFromItsVersion(version: Int) async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "store_v\(version)", on: cluster)
            defer { Task { try? await connection.close() } }
            let schema = SyncSchema.store
            let older = SyncSchema(
                table: schema.table, versionTable: schema.versionTable, lock: schema.lock,
                migrations: Array(schema.migrations.prefix(version)), program: "an older release")
            try await older.migrate(connection, logger: logger)
            // Written as that release wrote: the number left to the table.
            try await connection.query(
                """
                INSERT INTO defaults_sync_values (namespace, key, value, clock_wall, clock_counter, clock_origin)
                VALUES ('ns', 'old', 'x', 5, 0, 'o')
                """, logger: logger)

            try await schema.migrate(connection, logger: logger)
            #expect(
                try cluster.query("SELECT version FROM defaults_sync_schema", database: "store_v\(version)")
                    == ["\(schema.currentVersion)"])
            let rows = SyncTable.store(namespace: "ns")
            let before = try await rows.latest(on: connection, logger: logger)
            #expect(try await rows.records(forKeys: ["old"], on: connection, logger: logger).map(\.wall) == [5])
            #expect(try await push([record("old", wall: 6), record("new", wall: 1)], to: rows, on: connection).isEmpty)
            let changes = try await rows.changes(after: before, on: connection, logger: logger)
            #expect(changes.map(\.key) == ["old", "new"])
            #expect(changes.allSatisfy { ($0.seq ?? 0) > before })
        }
    }

    @Test func aDatabaseANewerReleaseMigratedIsRefusedUntouched() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "newer", on: cluster)
            defer { Task { try? await connection.close() } }
            let schema = SyncSchema.store
            let newer = schema.adding(
                Array(repeating: [], count: schema.currentVersion) + [["SELECT 1"]], program: "later")
            try await newer.migrate(connection, logger: logger)
            await #expect {
                try await schema.migrate(connection, logger: logger)
            } throws: { error in
                let cause = (error as? PostgresTransactionError)?.closureError ?? error
                return "\(cause)".contains(
                    "newer than this program's (\(schema.currentVersion)): update swift-defaults")
            }
            #expect(try cluster.query("SELECT version FROM defaults_sync_schema", database: "newer") == ["4"])
        }
    }

    @Test func theLaterVersionWinsAndARecordPostgreSQLRefusesIsRefusedAlone() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "upsert", on: cluster)
            defer { Task { try? await connection.close() } }
            try await SyncSchema.store.migrate(connection, logger: logger)
            let rows = SyncTable.store(namespace: "ns")
            #expect(try await push([record("k", wall: 2, value: "2")], to: rows, on: connection).isEmpty)
            // Older, then equal: passed over; later by origin alone (byte order): stored.
            var later = record("k", wall: 2, value: "3")
            later.origin = "test2"
            _ = try await push(
                [record("k", wall: 1, value: "1"), record("k", wall: 2, value: "x")], to: rows, on: connection)
            #expect(
                try await rows.records(forKeys: ["k"], on: connection, logger: logger).first?.value == Data("2".utf8))
            _ = try await push([later], to: rows, on: connection)
            #expect(
                try await rows.records(forKeys: ["k"], on: connection, logger: logger).first?.value == Data("3".utf8))
            #expect(RecordVersion(record("k", wall: 2)) < RecordVersion(later))

            // Too long for the primary key's index: PostgreSQL refuses that record, not the others.
            let tooLong = String((0..<4_000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
            let refused = try await push(
                [record("a", wall: 1), record(tooLong, wall: 1), record("z", wall: 1)], to: rows, on: connection)
            #expect(refused.keys.sorted() == [tooLong], "\(refused)")
            #expect(refused[tooLong]?.contains("the database refused it") == true, "\(refused)")
            let stamps = try await rows.stamps(on: connection, logger: logger)
            #expect(stamps.map(\.key).sorted() == ["a", "k", "z"])
        }
    }

    /// The batch upsert (the sync service's push) is prepared once on a connection and gives the
    /// same answers on every run after: past PostgreSQL's fifth, where it may plan it once for
    /// every value (a generic plan), the later version still wins, the rows are numbered in the
    /// records' order, and the reads of changes see them.
    @Test func preparedStatementsKeepTheirRulesOnEveryRun() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "batch_upsert", on: cluster)
            defer { Task { try? await connection.close() } }
            try await SyncSchema.store.migrate(connection, logger: logger)
            let rows = SyncTable.store(namespace: "ns")
            let runs = 9
            for run in 1...runs {
                // A new key each run, and "k" at a version that alternates older and later.
                let wall: Int64 = run.isMultiple(of: 2) ? 0 : Int64(run)
                let batch = [record("k", wall: wall, value: "\(run)"), record("new\(run)", wall: 1)]
                let stored = try await connection.withTransaction(logger: logger) { connection in
                    try await rows.store(batch, on: connection, logger: self.logger)
                }
                #expect(stored.map(\.key) == (wall == 0 ? ["new\(run)"] : ["k", "new\(run)"]), "run \(run)")
                #expect(stored.map(\.seq) == stored.map(\.seq).sorted(), "run \(run): numbered in order")
                let kept = try await rows.records(forKeys: ["k"], on: connection, logger: logger).first
                #expect(kept?.value == Data("\(run - (wall == 0 ? 1 : 0))".utf8), "run \(run)")
            }
            var prepared: [(Int64, Int64)] = []
            let statements = try await connection.query(
                """
                SELECT generic_plans, custom_plans FROM pg_prepared_statements
                WHERE statement LIKE 'INSERT INTO defaults_sync_values%'
                """, logger: logger)
            for try await plans in statements.decode((Int64, Int64).self) { prepared.append(plans) }
            #expect(prepared.count == 1, "one prepared statement on the connection")
            #expect(prepared.first.map { $0.0 + $0.1 } == Int64(runs), "run \(runs) times as prepared")

            // The reads: a page is the limit's first changes, and no limit reads them all.
            let latest = try await rows.latest(on: connection, logger: logger)
            let all = try await rows.changes(after: 0, on: connection, logger: logger)
            #expect(all.count == runs + 1 && all.last?.seq == latest, "\(all.map(\.key))")
            for run in 1...runs {
                let page = try await rows.changes(after: 0, limit: 2, on: connection, logger: logger)
                #expect(page.map(\.seq) == all.prefix(2).map(\.seq), "run \(run)")
                #expect(try await rows.latest(on: connection, logger: logger) == latest, "run \(run)")
            }
        }
    }

    /// A prepared statement whose first preparation fails (a lock timeout here, as a migration
    /// holding the table would give) closes its connection: PostgresNIO would answer every later
    /// run on it with the same failure, and its pool would keep handing it out.
    @Test func aStatementWhosePreparationFailedClosesItsConnection() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "failed_preparation", on: cluster)
            defer { Task { try? await connection.close() } }
            try await SyncSchema.store.migrate(connection, logger: logger)
            let url = cluster.url.replacingOccurrences(of: "/defaults_sync?", with: "/failed_preparation?")
            let locker = try await PostgresConnection.connect(
                configuration: PostgresSyncStore.configuration(url: url), id: 2, logger: logger)
            defer { Task { try? await locker.close() } }
            try await locker.query("BEGIN", logger: logger)
            try await locker.query("LOCK TABLE defaults_sync_values IN ACCESS EXCLUSIVE MODE", logger: logger)
            try await connection.query("SET lock_timeout = '200ms'", logger: logger)
            let rows = SyncTable.store(namespace: "ns")
            await #expect(throws: PSQLError.self) {
                try await rows.store([record("k", wall: 1)], on: connection, logger: self.logger)
            }
            #expect(connection.isClosed, "closed, so that no later run meets the kept failure")
            try await locker.query("ROLLBACK", logger: logger)
        }
    }

    /// The upsert's rule in SQL (`RecordVersion.replacesSQL`) and the one in Swift (`WireVersion`)
    /// keep the same version of every pair of the version-order table, pushed in both orders.
    @Test func theUpsertKeepsTheLaterVersionAsSwiftOrdersThem() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "version_order", on: cluster)
            defer { Task { try? await connection.close() } }
            try await SyncSchema.store.migrate(connection, logger: logger)
            let rows = SyncTable.store(namespace: "ns")
            for (index, pair) in VersionOrderTests.pairs.enumerated() {
                let orders = [(pair.first, pair.order, pair.second), (pair.second, pair.reversed, pair.first)]
                for (turn, (first, order, second)) in orders.enumerated() {
                    let key = "k\(index)-\(turn)"
                    let records = [("first", first), ("second", second)].map { value, version in
                        WireRecord(
                            key: key, value: Data(value.utf8), wall: version.wall, counter: version.counter,
                            origin: version.origin)
                    }
                    for record in records {
                        #expect(try await push([record], to: rows, on: connection).isEmpty)
                    }
                    let kept = try await rows.records(forKeys: [key], on: connection, logger: logger).first
                    let expected = order == .before ? records[1] : records[0]
                    #expect(kept?.value == expected.value, "\(pair), pushed \(turn == 0 ? "in" : "in reverse") order")
                    #expect(kept.map { Array($0.origin.utf8) } == Array(expected.origin.utf8), "\(pair)")
                    #expect((RecordVersion(records[1]) > RecordVersion(records[0])) == (order == .before))
                }
            }
        }
    }

    /// A row stored days ahead of the database's clock (before such versions were refused, or by
    /// someone with the database's access) does not keep the key's later changes out: the next
    /// ordinary push replaces it, as `WireVersion.replaces(_:now:)` says; one a minute ahead stays.
    @Test func aRowStoredDaysAheadIsReplacedByTheNextPush() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await connection(to: "days_ahead", on: cluster)
            defer { Task { try? await connection.close() } }
            try await SyncSchema.store.migrate(connection, logger: logger)
            let rows = SyncTable.store(namespace: "ns")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for (key, ahead, replaced) in [("days", 3 * WireVersion.maximumLead, true), ("minute", 60_000, false)] {
                let poisoned = WireRecord(
                    key: key, value: Data("ahead".utf8), wall: now + ahead, counter: 0, origin: "z")
                #expect(try await push([poisoned], to: rows, on: connection).isEmpty)
                let ordinary = WireRecord(key: key, value: Data("now".utf8), wall: now, counter: 0, origin: "a")
                #expect(ordinary.version.replaces(poisoned.version, now: now) == replaced)
                #expect(try await push([ordinary], to: rows, on: connection).isEmpty)
                let kept = try await rows.records(forKeys: [key], on: connection, logger: logger).first
                #expect(kept?.value == Data((replaced ? "now" : "ahead").utf8), "\(key)")
            }
        }
    }

    @Test func aRecordNoTableCanHoldIsRefusedBeforeTheDatabaseIsAsked() {
        #expect(RecordRefusal.reason(for: record("a\u{0}b", wall: 1)) != nil)
        #expect(RecordRefusal.reason(for: record("fine", wall: 1)) == nil)
        let limits = ServiceLimits(
            valueBytes: 10, namespaceBytes: 100, namespaceKeys: 10, messageBytes: 100, messagesPerSecond: 1, keyBytes: 3
        )
        #expect(RecordRefusal.reason(for: record("long", wall: 1), limits: limits)?.contains("4 bytes") == true)
    }

    @Test func addedStatementsRunAfterTheSchemasOwnInEachMigration() {
        let schema = SyncSchema(table: .store, versionTable: "t", lock: 1, migrations: [["a"], ["b"]], program: "p")
        let added = schema.adding([["a2"], [], ["c"]], program: "q")
        #expect(added.migrations == [["a", "a2"], ["b"], ["c"]])
        #expect(added.currentVersion == 3)
        #expect(added.program == "q")
    }

    @Test func reconnectionBacksOffUntilStopped() async {
        let attempts = Mutex(0)
        let failures = Mutex(0)
        let policy = ReconnectionPolicy(delays: .milliseconds(1)...(.milliseconds(4)))
        await policy.run(until: attempts.withLock { $0 } >= 5) { _ in
            attempts.withLock { $0 += 1 }
            throw CancellationError()
        } failed: { _ in
            failures.withLock { $0 += 1 }
        }
        #expect(attempts.withLock { $0 } == 5)
        #expect(failures.withLock { $0 } == 4)
    }
}
