import Defaults
import DefaultsPostgres
import DefaultsSyncSQL
import Foundation
import Synchronization
import TestSupport
import Testing

/// A database URL naming several servers, as libpq writes it, read without a server.
@Suite("A database URL of several servers")
struct SeveralServersURLTests {
    @Test func theServersAreReadInOrderWithTheirPorts() throws {
        let url = try PostgresURL(
            "postgres://app:s3cr%40t@db1.example:5433,db2.example,[::1]:5434/settings?target_session_attrs=read-write")
        #expect(
            url.endpoints == [
                .init(host: "db1.example", port: 5433), .init(host: "db2.example", port: 5432),
                .init(host: "::1", port: 5434),
            ])
        #expect(url.targetSession == .readWrite)
        #expect(url.password == "s3cr@t")
        #expect(url.database == "settings")
        #expect(url.description == "postgres://app@db1.example:5433,db2.example:5432,[::1]:5434/settings")
        #expect(try url.servers().configurations.map(\.port) == [5433, 5432, 5434])
        // One server is a list of one; libpq's default target takes whichever connects.
        let one = try PostgresURL("postgres://app@db.example/settings")
        #expect(one.endpoints == [.init(host: "db.example", port: 5432)])
        #expect(one.targetSession == .any)
        #expect(try PostgresURL("postgres://app@a,b/db?target_session_attrs=primary").targetSession == .primary)
    }

    @Test func aBadListIsRefusedClearlyWithoutThePassword() {
        let seventeen = (1...17).map { "h\($0)" }.joined(separator: ",")
        let cases: [(String, String)] = [
            ("postgres://app:pw@h1,,h2/db", "bad host"),
            ("postgres://app:pw@h1:99999,h2/db", "bad port"),
            ("postgres://app:pw@h1:x,h2/db", "bad port"),
            ("postgres://app:pw@h1,h2 evil/db", "bad host"),
            ("postgres://app:pw@\(seventeen)/db", "at most 16"),
            ("postgres://app:pw@h1,h2/db?target_session_attrs=read-only", "target_session_attrs"),
            // A list that would take whichever server connects, a replica too.
            ("postgres://app:pw@h1,h2/db", "add target_session_attrs=read-write"),
            ("postgres://app:pw@h1,h2/db?target_session_attrs=any", "add target_session_attrs=read-write"),
        ]
        for (url, message) in cases {
            #expect {
                try PostgresSyncStore(url: url, namespace: "n")
            } throws: { error in
                "\(error)".contains(message) && !"\(error)".contains("pw")
            }
        }
    }
}

/// The store on a URL of several real servers, one of which stands for the primary: the others
/// are read-only (as a replica, or a demoted primary, is) or not there at all.
@Suite(
    "PostgresSyncStore on several servers", .enabled(if: PostgresCluster.isAvailable), .mayBlock,
    .timeLimit(.minutes(3)))
struct SeveralServersStoreTests {
    final class Events: Sendable {
        private let state = Mutex<(connections: Int, errors: [String])>((0, []))
        var connections: Int { state.withLock { $0.connections } }
        var errors: [String] { state.withLock { $0.errors } }

        func record(_ event: SyncEvent) {
            switch event {
            case .connected: state.withLock { $0.connections += 1 }
            case .disconnected(let error): state.withLock { $0.errors.append("\(error)") }
            case .received: break
            }
        }
    }

    /// Makes `cluster` refuse writes to every new transaction (as a replica does), or take them again.
    func setReadOnly(_ cluster: PostgresCluster, _ readOnly: Bool) throws {
        try cluster.query(
            readOnly
                ? "ALTER SYSTEM SET default_transaction_read_only = on"
                : "ALTER SYSTEM RESET default_transaction_read_only")
        try cluster.query("SELECT pg_reload_conf()")
    }

    func keys(in cluster: PostgresCluster, namespace: String) throws -> [String] {
        try cluster.query(
            "SELECT key FROM defaults_sync_values WHERE namespace = '\(namespace)' ORDER BY key",
            database: "defaults_sync")
    }

    func url(_ ports: [Int]) -> String {
        let hosts = ports.map { "127.0.0.1:\($0)" }.joined(separator: ",")
        return "postgres://defaults:\(PostgresCluster.password)@\(hosts)/defaults_sync"
            + "?sslmode=disable&target_session_attrs=read-write"
    }

    func record(_ key: String) -> SyncRecord {
        SyncRecord(
            key: key, value: Data("v".utf8),
            timestamp: SyncTimestamp(wallTime: Int64(Date().timeIntervalSince1970 * 1000), counter: 0, origin: "test"))
    }

    @Test func theStoreWritesToTheServerThatAcceptsWritesAndFollowsItWhenItMoves() async throws {
        try await PostgresCluster.with { first in
            try await PostgresCluster.with { second in
                try setReadOnly(first, true)
                let namespace = "com.example.hosts-\(UUID().uuidString.prefix(8))"
                // Nothing listens on the first: a lost machine.
                let store = try PostgresSyncStore(
                    url: url([try PostgresCluster.freePort(), first.port, second.port]), namespace: namespace)
                #expect(store.endpoint.contains("127.0.0.1:\(first.port),127.0.0.1:\(second.port)"))
                #expect(!store.description.contains(PostgresCluster.password))
                let events = Events()
                let running = Task { await store.run { events.record($0) } }
                defer { running.cancel() }
                try await waitUntil("the store connects") { events.connections == 1 }
                try await store.push([record("before")])
                #expect(try keys(in: second, namespace: namespace) == ["before"])

                // The primary moves: the second is demoted (its sessions end, as a restart ends
                // them) and the first promoted.
                try setReadOnly(second, true)
                try setReadOnly(first, false)
                try second.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'defaults'")
                try await waitUntil("the store connects again") { events.connections == 2 }
                try await store.push([record("after")])
                #expect(try keys(in: first, namespace: namespace) == ["after"])
                #expect(try keys(in: second, namespace: namespace) == ["before"], "nothing written to the demoted one")
            }
        }
    }

    @Test func withNoServerAcceptingWritesTheStoreSaysWhyForEachAndWaits() async throws {
        try await PostgresCluster.with { replica in
            try setReadOnly(replica, true)
            let lost = try PostgresCluster.freePort()
            let store = try PostgresSyncStore(
                url: url([lost, replica.port]), namespace: "com.example.none-\(UUID().uuidString.prefix(8))")
            let events = Events()
            let running = Task { await store.run { events.record($0) } }
            defer { running.cancel() }
            let error = try await poll("a reported failure") { events.errors.first }
            #expect(error.contains("no server accepts writes"), "\(error)")
            #expect(error.contains("127.0.0.1:\(lost)"), "\(error)")
            #expect(error.contains("127.0.0.1:\(replica.port): read-only"), "\(error)")
            #expect(!error.contains(PostgresCluster.password))
            #expect(events.connections == 0)
            // Once the server takes writes, the store connects without anyone doing anything.
            try setReadOnly(replica, false)
            try await waitUntil("the store connects") { events.connections == 1 }
        }
    }
}
