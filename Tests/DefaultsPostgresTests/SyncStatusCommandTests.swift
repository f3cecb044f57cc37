import DefaultsPostgres
import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Logging
import PostgresNIO
import TestSupport
import Testing

/// The built `defaults-sync status`, run as a process: it asks the store `$DEFAULTS_SYNC_URL`
/// names through `DefaultsSyncStore`, and every failure exits non-zero, naming the problem in
/// text and in JSON. (The sync service's cases are in the SyncService package's
/// `StatusCommandTests`, which starts the server.)
@Suite(
    "defaults-sync status through the store",
    .enabled(if: FileManager.default.isExecutableFile(atPath: StatusCommand.path)), .mayBlock)
struct PostgresSyncStatusCommandTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"))
    func reportsTheRecordsTheNamespacesTableHoldsAndThePendingChanges() async throws {
        try await PostgresCluster.with { cluster in
            let namespace = "com.example.status"
            let a = try await SyncProcess(
                configDirectory: directory.machine("a"), url: cluster.url, namespace: namespace,
                keys: ["one", "two", "three"])
            for key in ["one", "two", "three"] {
                try await a.set(key, "value-of-\(key)")
            }
            try await a.waitForSync()
            try await a.quit()
            // Another namespace of the same database is not counted.
            let other = try await SyncProcess(
                configDirectory: directory.machine("other"), url: cluster.url, namespace: "com.example.other",
                keys: ["elsewhere"])
            try await other.set("elsewhere", "x")
            try await other.waitForSync()
            try await other.quit()
            let held = try cluster.query(
                "SELECT count(*) FROM defaults_sync_values WHERE namespace = '\(namespace)'",
                database: "defaults_sync")
            #expect(held == ["3"])

            let environment = [
                "DEFAULTS_SYNC_URL": cluster.url, "DEFAULTS_SYNC_NAMESPACE": namespace,
                "XDG_CONFIG_HOME": directory.machine("a").path,
            ]
            let (result, report) = try StatusCommand.json(environment)
            #expect(result.status == 0, "\(result)")
            #expect(report.ok && report.connected && report.error == nil, "\(result)")
            #expect(report.serverRecords == 3, "\(result)")
            #expect(report.serverLastChange != nil)
            #expect(report.storeKind == "postgres")
            #expect(report.store?.contains("(namespace \(namespace))") == true, "\(result)")
            #expect(report.store?.contains(PostgresCluster.password) == false)
            #expect(report.suites.map(\.suite) == ["sync-helper"])
            #expect(report.suites.first?.pendingChanges == 0)
            // Plain JSON: a URL's slashes are not escaped.
            #expect(!result.output.contains("\\/"), "\(result.output)")

            let text = try StatusCommand.run(environment)
            #expect(text.status == 0, "\(text)")
            #expect(text.output.contains("connected: yes"), "\(text)")
            #expect(text.output.contains("server records: 3 (last change "), "\(text)")
            #expect(text.output.contains("sync-helper: 0 pending change(s), last sync "), "\(text)")

            // Without a namespace, the server alone: no made-up namespace, no record count.
            var serverOnly = environment
            serverOnly["DEFAULTS_SYNC_NAMESPACE"] = ""
            let (checked, server) = try StatusCommand.json(serverOnly)
            #expect(checked.status == 0, "\(checked)")
            #expect(server.connected && server.serverRecords == nil, "\(checked)")
            #expect(server.store?.contains("namespace") == false, "\(checked)")
        }
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"))
    func aRefusedPasswordAndAnUnreadableJournalFail() async throws {
        try await PostgresCluster.with { cluster in
            let machine = try await SyncProcess(
                configDirectory: directory.machine("a"), url: cluster.url, namespace: "com.example.status",
                keys: ["k"])
            try await machine.set("k", "v")
            try await machine.waitForSync()
            try await machine.quit()
            var environment = [
                "DEFAULTS_SYNC_URL": cluster.url(password: "wrong-password"),
                "DEFAULTS_SYNC_NAMESPACE": "com.example.status", "XDG_CONFIG_HOME": directory.machine("a").path,
            ]
            let (result, refused) = try StatusCommand.json(environment)
            #expect(result.status != 0, "\(result)")
            #expect(!refused.ok && !refused.connected)
            #expect(refused.errorKind == "unreachable", "\(result)")
            #expect(refused.error?.contains("password authentication failed") == true, "\(result)")
            #expect(!result.output.contains("wrong-password"), "\(result)")
            let text = try StatusCommand.run(environment)
            #expect(text.status != 0, "\(text)")
            #expect(text.output.contains("error: ") && text.output.contains("password authentication failed"))
            #expect(!text.output.contains("wrong-password"), "\(text)")

            // A damaged journal fails the status, and is left as it is: the status only reads.
            environment["DEFAULTS_SYNC_URL"] = cluster.url
            let journal = directory.machine("a").appendingPathComponent(".defaults-sync/damaged.plist")
            try Data("not a property list".utf8).write(to: journal)
            let (damagedResult, damaged) = try StatusCommand.json(environment)
            #expect(damagedResult.status != 0, "\(damagedResult)")
            #expect(damaged.connected && damaged.serverRecords == 1 && damaged.error == nil, "\(damagedResult)")
            #expect(damaged.problems.map(\.kind) == ["unreadable-journal"], "\(damagedResult)")
            let suite = damaged.suites.first { $0.suite == "damaged" }
            #expect(suite?.problem?.contains("could not be read") == true, "\(damagedResult)")
            let damagedText = try StatusCommand.run(environment)
            #expect(damagedText.status != 0)
            #expect(damagedText.output.contains("error: damaged: "), "\(damagedText)")
            #expect(try Data(contentsOf: journal) == Data("not a property list".utf8))
            let left = try FileManager.default.contentsOfDirectory(atPath: journal.deletingLastPathComponent().path)
            #expect(!left.contains { $0.contains("corrupt") }, "nothing moved aside: \(left)")
        }
    }

    /// What the database `name` holds besides PostgreSQL's own catalogs: its tables, sequences,
    /// indexes and functions, by name.
    static func objects(in name: String, of cluster: PostgresCluster) throws -> [String] {
        try cluster.query(
            """
            SELECT relname FROM pg_class JOIN pg_namespace n ON n.oid = relnamespace
            WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
            UNION ALL SELECT proname FROM pg_proc JOIN pg_namespace n ON n.oid = pronamespace
            WHERE nspname NOT IN ('pg_catalog', 'information_schema')
            ORDER BY 1
            """, database: name)
    }

    /// A connection as the test's role to a database of its own, `name`, created empty; its URL.
    static func database(_ name: String, on cluster: PostgresCluster) async throws -> (
        url: String, connection: PostgresConnection
    ) {
        try cluster.query("CREATE DATABASE \(name) OWNER defaults")
        let url = cluster.url.replacingOccurrences(of: "/defaults_sync?", with: "/\(name)?")
        let connection = try await PostgresConnection.connect(
            configuration: PostgresSyncStore.configuration(url: url), id: 1, logger: Logger(label: "test"))
        return (url, connection)
    }

    /// The issue's case: the sync service's own database, holding 3 records, given as a
    /// `postgres://` URL. The status names it and the fix, and creates nothing there.
    @Test(.enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"))
    func theServicesDatabaseFailsNamingTheServiceAndGetsNoTable() async throws {
        try await PostgresCluster.with { cluster in
            let logger = Logger(label: "test")
            let (url, connection) = try await Self.database("service", on: cluster)
            // The values part of the service's schema, migrated as the server migrates it (the
            // server adds statements of its own, which this package cannot run), and 3 records.
            try await SyncSchema.service.migrate(connection, logger: logger)
            let rows = SyncTable.service(user: "u", namespace: "com.example.status")
            for key in ["one", "two", "three"] {
                let record = WireRecord(
                    key: key, value: Data("v".utf8), wall: 1_700_000_000_000, counter: 0, origin: "o")
                _ = try await rows.store(record, savepoint: false, on: connection, logger: logger)
            }
            try await connection.close()
            #expect(
                try cluster.query("SELECT count(*) FROM defaults_sync_service_values", database: "service") == ["3"])
            let before = try Self.objects(in: "service", of: cluster)

            for namespace in ["com.example.status", ""] {
                let environment = [
                    "DEFAULTS_SYNC_URL": url, "DEFAULTS_SYNC_NAMESPACE": namespace,
                    "XDG_CONFIG_HOME": directory.url.path,
                ]
                let (result, report) = try StatusCommand.json(environment)
                #expect(result.status == 1, "\(result)")
                #expect(!report.ok && report.serverRecords == nil, "\(result)")
                #expect(report.errorKind == "service-database", "\(result)")
                #expect(report.problems.map(\.kind) == ["service-database"], "\(result)")
                for says in ["the sync service's database", "wss://", "DEFAULTS_SYNC_TOKEN", "Nothing was created"] {
                    #expect(report.error?.contains(says) == true, "\(says): \(result)")
                }
                #expect(!result.output.contains(PostgresCluster.password))
                let text = try StatusCommand.run(environment)
                #expect(text.status == 1, "\(text)")
                #expect(
                    text.output.contains("error: ") && text.output.contains("the sync service's database"), "\(text)")
            }
            // Nothing was created: no store table, sequence, function or version table.
            #expect(try Self.objects(in: "service", of: cluster) == before)
            #expect(
                try cluster.query(
                    "SELECT count(*) FROM pg_tables WHERE tablename IN ('defaults_sync_values', 'defaults_sync_schema')",
                    database: "service") == ["0"])
            #expect(
                try cluster.query("SELECT count(*) FROM defaults_sync_service_values", database: "service") == ["3"])
        }
    }

    /// A database nothing has synced through is reachable, holds 0 records, and is left empty.
    @Test(.enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"))
    func anEmptyDatabaseHoldsNoRecordAndGetsNoTable() async throws {
        try await PostgresCluster.with { cluster in
            #expect(try Self.objects(in: "defaults_sync", of: cluster) == [])
            for namespace in ["com.example.status", ""] {
                let environment = [
                    "DEFAULTS_SYNC_URL": cluster.url, "DEFAULTS_SYNC_NAMESPACE": namespace,
                    "XDG_CONFIG_HOME": directory.url.path,
                ]
                let (result, report) = try StatusCommand.json(environment)
                #expect(result.status == 0, "\(result)")
                #expect(report.ok && report.connected && report.error == nil, "\(result)")
                #expect(report.serverRecords == 0 && report.serverLastChange == nil, "\(result)")
                #expect(report.note?.contains("nothing has synced through this database yet") == true, "\(result)")
                let text = try StatusCommand.run(environment)
                #expect(text.status == 0, "\(text)")
                #expect(text.output.contains("connected: yes") && text.output.contains("server records: 0"), "\(text)")
                #expect(text.output.contains("note: nothing has synced through this database yet"), "\(text)")
            }
            #expect(try Self.objects(in: "defaults_sync", of: cluster) == [])
        }
    }

    /// A role that may only read, with `CONNECT` on the database and `SELECT` on the store's two
    /// tables, gets the namespace's count: the status runs in a read-only transaction, no
    /// migration, whose `CREATE TABLE IF NOT EXISTS` PostgreSQL refuses such a role even when the
    /// table is there. The database is left as it was.
    @Test(.enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"))
    func aRoleThatMayOnlyReadGetsTheCountAndChangesNothing() async throws {
        try await PostgresCluster.with { cluster in
            let logger = Logger(label: "test")
            let (url, connection) = try await Self.database("readable", on: cluster)
            try await SyncSchema.store.migrate(connection, logger: logger)
            for (namespace, keys) in [("com.example.status", ["one", "two"]), ("com.example.other", ["three"])] {
                let rows = SyncTable.store(namespace: namespace)
                for key in keys {
                    let record = WireRecord(
                        key: key, value: Data("v".utf8), wall: 1_700_000_000_000, counter: 0, origin: "o")
                    _ = try await rows.store(record, savepoint: false, on: connection, logger: logger)
                }
            }
            try await connection.close()
            for statement in [
                "CREATE ROLE reader LOGIN PASSWORD 'reader-password'",
                "REVOKE ALL ON DATABASE readable FROM PUBLIC",
                "GRANT CONNECT ON DATABASE readable TO reader",
            ] {
                try cluster.query(statement)
            }
            try cluster.query("REVOKE CREATE ON SCHEMA public FROM PUBLIC", database: "readable")
            try cluster.query(
                "GRANT SELECT ON defaults_sync_values, defaults_sync_schema TO reader", database: "readable")
            func snapshot() throws -> [String] {
                try Self.objects(in: "readable", of: cluster)
                    + cluster.query("SELECT version FROM defaults_sync_schema", database: "readable")
                    + cluster.query(
                        "SELECT namespace || ' ' || key || ' ' || seq FROM defaults_sync_values ORDER BY 1",
                        database: "readable")
            }
            let before = try snapshot()
            let readerURL = url.replacingOccurrences(
                of: "defaults:\(PostgresCluster.password)@", with: "reader:reader-password@")
            #expect(readerURL != url)
            let environment = [
                "DEFAULTS_SYNC_URL": readerURL, "DEFAULTS_SYNC_NAMESPACE": "com.example.status",
                "XDG_CONFIG_HOME": directory.url.path,
            ]
            let (result, report) = try StatusCommand.json(environment)
            #expect(result.status == 0, "\(result)")
            #expect(report.ok && report.connected && report.error == nil, "\(result)")
            #expect(report.serverRecords == 2, "\(result)")
            #expect(report.serverLastChange == Date(timeIntervalSince1970: 1_700_000_000), "\(result)")
            #expect(report.note == nil, "\(result)")
            #expect(report.store?.contains("reader@") == true && !result.output.contains("reader-password"))
            #expect(try snapshot() == before)
        }
    }

    /// A store schema an older release left is counted as it is, not migrated; one a newer release
    /// migrated fails the status, untouched.
    @Test(.enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"))
    func anOlderSchemaIsCountedUnmigratedAndANewerOneFails() async throws {
        try await PostgresCluster.with { cluster in
            let logger = Logger(label: "test")
            let schema = SyncSchema.store
            let (olderURL, older) = try await Self.database("older", on: cluster)
            try await SyncSchema(
                table: schema.table, versionTable: schema.versionTable, lock: schema.lock,
                migrations: Array(schema.migrations.prefix(1)), program: "an older release"
            ).migrate(older, logger: logger)
            try await older.query(
                """
                INSERT INTO defaults_sync_values (namespace, key, value, clock_wall, clock_counter, clock_origin)
                VALUES ('com.example.status', 'a', 'x', 1700000000000, 0, 'o'),
                    ('com.example.status', 'b', 'y', 1700000005000, 0, 'o'), ('com.example.other', 'c', 'z', 5, 0, 'o')
                """, logger: logger)
            try await older.close()
            let olderObjects = try Self.objects(in: "older", of: cluster)
            let environment = [
                "DEFAULTS_SYNC_URL": olderURL, "DEFAULTS_SYNC_NAMESPACE": "com.example.status",
                "XDG_CONFIG_HOME": directory.url.path,
            ]
            let (result, report) = try StatusCommand.json(environment)
            #expect(result.status == 0, "\(result)")
            #expect(report.ok && report.connected && report.serverRecords == 2, "\(result)")
            #expect(report.serverLastChange == Date(timeIntervalSince1970: 1_700_000_005), "\(result)")
            #expect(report.note?.contains("is version 1, older than") == true, "\(result)")
            #expect(try cluster.query("SELECT version FROM defaults_sync_schema", database: "older") == ["1"])
            #expect(try Self.objects(in: "older", of: cluster) == olderObjects)

            let (newerURL, newer) = try await Self.database("newer", on: cluster)
            try await schema.migrate(newer, logger: logger)
            try await newer.close()
            try cluster.query("UPDATE defaults_sync_schema SET version = version + 1", database: "newer")
            let newerObjects = try Self.objects(in: "newer", of: cluster)
            var newerEnvironment = environment
            newerEnvironment["DEFAULTS_SYNC_URL"] = newerURL
            let (refused, newerReport) = try StatusCommand.json(newerEnvironment)
            #expect(refused.status == 1, "\(refused)")
            #expect(newerReport.errorKind == "newer-schema", "\(refused)")
            #expect(newerReport.error?.contains("newer than this program's") == true, "\(refused)")
            #expect(
                try cluster.query("SELECT version FROM defaults_sync_schema", database: "newer")
                    == ["\(schema.currentVersion + 1)"])
            #expect(try Self.objects(in: "newer", of: cluster) == newerObjects)
        }
    }

    @Test func anUnreachableServerFails() throws {
        let port = try PostgresCluster.freePort()
        for url in ["postgres://defaults:secret@127.0.0.1:\(port)/db?sslmode=disable", "ws://127.0.0.1:\(port)"] {
            let environment = [
                "DEFAULTS_SYNC_URL": url, "DEFAULTS_SYNC_TOKEN": unsignedToken,
                "DEFAULTS_SYNC_NAMESPACE": "", "XDG_CONFIG_HOME": directory.url.path,
            ]
            let (result, report) = try StatusCommand.json(environment)
            #expect(result.status != 0, "\(result)")
            #expect(!report.ok && !report.connected)
            #expect(report.errorKind == "unreachable", "\(result)")
            #expect(report.error?.contains("127.0.0.1:\(port)") == true, "\(result)")
            #expect(!result.output.contains("secret"))
            let text = try StatusCommand.run(environment)
            #expect(text.status != 0, "\(text)")
            #expect(text.output.contains("connected: no") && text.output.contains("error: "), "\(text)")
        }
    }

    /// A server that accepts the connection and never answers fails the status at its deadline.
    @Test func aServerThatNeverAnswersFailsAtTheDeadline() throws {
        let silent = try SilentListener()
        let urls = ["postgres://defaults@127.0.0.1:\(silent.port)/db?sslmode=disable", "ws://127.0.0.1:\(silent.port)"]
        for url in urls {
            let environment = [
                "DEFAULTS_SYNC_URL": url, "DEFAULTS_SYNC_TOKEN": unsignedToken,
                "DEFAULTS_SYNC_NAMESPACE": "", "XDG_CONFIG_HOME": directory.url.path,
            ]
            let (result, report) = try StatusCommand.json(environment, arguments: ["--timeout", "2"])
            #expect(result.status != 0, "\(result)")
            #expect(!report.connected)
            // The store's own limit on one answer or the command's deadline, whichever ends first.
            #expect(["timed-out", "unreachable"].contains(report.errorKind ?? ""), "\(result)")
            #expect(report.error?.contains("within") == true, "\(result)")
        }
    }

    @Test func anUnknownSchemeABadURLOrNoStoreFails() throws {
        let cases: [(url: String, kind: String, says: String)] = [
            ("mysql://user:secret@127.0.0.1/db", "unknown-scheme", "\"mysql\""),
            ("https://user:secret@example.com/sync", "unknown-scheme", "\"https\""),
            ("not a url secret", "bad-url", "is not a URL"),
            ("postgres://:secret@127.0.0.1/db", "bad-url", "names no user"),
            ("postgres://user:secret@127.0.0.1/db?sslmode=sometimes", "bad-url", "sslmode"),
            ("wss://", "bad-url", "names no host"),
            ("", "no-store", "DEFAULTS_SYNC_URL"),
        ]
        for (url, kind, says) in cases {
            let environment = [
                "DEFAULTS_SYNC_URL": url, "DEFAULTS_SYNC_TOKEN": unsignedToken,
                "XDG_CONFIG_HOME": directory.url.path,
            ]
            let (result, report) = try StatusCommand.json(environment)
            #expect(result.status != 0, "\(url): \(result)")
            #expect(report.errorKind == kind, "\(url): \(result)")
            #expect(report.error?.contains(says) == true, "\(url): \(result)")
            #expect(report.problems.map(\.kind) == [kind], "\(url): \(result)")
            // A URL can hold a password: it is never echoed.
            #expect(!result.output.contains("secret"), "\(url): \(result)")
            let text = try StatusCommand.run(environment)
            #expect(text.status != 0, "\(url): \(text)")
            #expect(text.output.contains("error: ") && text.output.contains(says), "\(url): \(text)")
            #expect(!text.output.contains("secret"), "\(url): \(text)")
        }
    }

    @Test func theServiceTakesAWellFormedTokenFromTheEnvironmentOnly() throws {
        let port = try PostgresCluster.freePort()
        let cases: [(token: String, kind: String, says: String)] = [
            ("", "no-token", "DEFAULTS_SYNC_TOKEN"),
            ("not-a-token", "bad-token", "not a JWT"),
        ]
        for (token, kind, says) in cases {
            let environment = [
                "DEFAULTS_SYNC_URL": "ws://127.0.0.1:\(port)", "DEFAULTS_SYNC_TOKEN": token,
                "XDG_CONFIG_HOME": directory.url.path,
            ]
            let (result, report) = try StatusCommand.json(environment)
            #expect(result.status != 0, "\(result)")
            #expect(report.errorKind == kind, "\(result)")
            #expect(report.error?.contains(says) == true, "\(result)")
        }
        // The token's namespace must be the one asked for.
        let mismatch = try StatusCommand.json([
            "DEFAULTS_SYNC_URL": "ws://127.0.0.1:\(port)", "DEFAULTS_SYNC_TOKEN": unsignedToken,
            "DEFAULTS_SYNC_NAMESPACE": "com.example.other", "XDG_CONFIG_HOME": directory.url.path,
        ])
        #expect(mismatch.result.status != 0)
        #expect(mismatch.report.errorKind == "namespace-mismatch", "\(mismatch.result)")
        // No option takes a token, where `ps` would show it; a deadline must be positive.
        for arguments in [["--token", unsignedToken], ["--timeout", "0"]] {
            let refused = try StatusCommand.run(
                ["DEFAULTS_SYNC_URL": "ws://127.0.0.1:\(port)", "XDG_CONFIG_HOME": directory.url.path],
                arguments: arguments)
            #expect(refused.status != 0, "\(arguments): \(refused)")
        }
    }
}

/// The built `defaults-sync status`.
enum StatusCommand {
    static let path = builtExecutable("defaults-sync")

    /// What `status --json` prints.
    struct Report: Decodable {
        struct Suite: Decodable {
            var suite: String
            var pendingChanges: Int
            var problem: String?
        }

        struct Problem: Decodable {
            var kind: String
            var message: String
        }

        var ok: Bool
        var store: String?
        var storeKind: String?
        var connected: Bool
        var error: String?
        var errorKind: String?
        var serverRecords: Int?
        var serverLastChange: Date?
        var note: String?
        var suites: [Suite]
        var problems: [Problem]
    }

    /// Runs `defaults-sync status` with `environment` on top of this process's (every variable of
    /// the command set, so that none comes from the test's own environment).
    static func run(_ environment: [String: String], arguments: [String] = []) throws -> ChildProcess.Result {
        let defaults = ["DEFAULTS_SYNC_URL": "", "DEFAULTS_SYNC_NAMESPACE": "", "DEFAULTS_SYNC_TOKEN": ""]
        return try ChildProcess.run(
            path, ["status"] + arguments, environment: defaults.merging(environment) { $1 })
    }

    /// Runs `defaults-sync status --json` and decodes its report.
    static func json(_ environment: [String: String], arguments: [String] = []) throws -> (
        result: ChildProcess.Result, report: Report
    ) {
        let result = try run(environment, arguments: ["--json"] + arguments)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return (result, try decoder.decode(Report.self, from: result.outputData))
        } catch {
            throw SyncProcess.Failure(description: "not a report (\(error)): \(result)")
        }
    }
}

/// A loopback port that accepts connections (the kernel completes them) and never answers: a
/// server that stopped answering.
final class SilentListener: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        var lastError = "no port"
        for _ in 0..<5 {
            let port = try PostgresCluster.freePort()
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw SyncProcess.Failure(description: "socket() failed") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            if bound && listen(fd, 16) == 0 {
                self.port = port
                descriptor = fd
                return
            }
            lastError = String(cString: strerror(errno))
            close(fd)
        }
        throw SyncProcess.Failure(description: "could not listen on a loopback port: \(lastError)")
    }

    deinit {
        close(descriptor)
    }
}
