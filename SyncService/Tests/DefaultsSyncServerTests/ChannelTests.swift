import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// The notification channel is no side door: a role of the same database that has no grant on
/// the service's tables, listening on its channel, reads nothing of what is pushed, and what it
/// sends on it reaches no device and stops no real change.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct ChannelTests {
    @Test(.timeLimit(.minutes(2)))
    func anotherRoleListeningReadsNoKeyNorValue() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let eve = try DatabaseNeighbour(cluster, name: "eve_listens")
        let listener = try eve.listen()
        // LISTEN took effect once psql answers the query after it.
        try listener.write("SELECT 'listening';\n")
        _ = try await listener.line(timeout: .seconds(30)) { $0 == "listening" }

        let (name, secret) = ("secret-key-\(UUID().uuidString)", "secret-value-\(UUID().uuidString)")
        let value = Data(secret.utf8)
        let replies = try await RawDevice.exchange(
            server.url, token: try await key.token(user: "listened"),
            [
                DeviceMessage(
                    id: 1, kind: .push, records: [WireRecord(key: name, value: value, wall: 1, counter: 0, origin: "o")]
                )
            ])
        #expect(replies.map(\.kind) == [.welcome, .reply], "\(replies) \(server.log)")
        try listener.write("SELECT 'drained';\n")
        listener.closeInput()
        let heard = try await listener.finish(timeout: .seconds(30)).output
        // It heard the push's notification, and nothing of it in clear.
        #expect(heard.contains("Asynchronous notification"), "\(heard)")
        for clear in [name, secret, value.base64EncodedString(), "listened"] {
            #expect(!heard.contains(clear), "\(clear) in \(heard)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func forgedNotificationsReachNoDeviceAndStopNoRealChange() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let eve = try DatabaseNeighbour(cluster, name: "eve_forges")
        let token = try await key.token(user: "victim")
        let tag = Owner(user: "victim", namespace: "com.example.app").tag
        let forgedRecord = try SyncProtocol.encode([
            WireRecord(key: "forged", value: Data("never committed".utf8), wall: 9, counter: 0, origin: "eve", seq: 1)
        ])
        let garbage = "s1 " + Data((0..<120).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let forgeries = [
            // The format of the notifications before they were sealed, with a record and a huge `latest`.
            "\(tag) 0 4000000000000000000 0 \(forgedRecord)",
            "\(tag) 0 4000000000000000000 0",
            garbage,
        ]
        let welcomed = Flag()
        let forged = Flag()
        async let reading = RawDevice.connect(server.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            var changes: [WireRecord] = []
            while !changes.contains(where: { $0.key == "real" }), let message = try await RawDevice.next(&iterator) {
                if message.kind == .welcome { welcomed.raise() }
                changes += message.kind == .changed ? message.records ?? [] : []
            }
            try await outbound.close(.normalClosure, reason: nil)
            return [ServerMessage(kind: .changed, records: changes)]
        }
        try await waitUntil("the reader's welcome") { welcomed.isRaised }
        for forgery in forgeries {
            try eve.run("NOTIFY \(ServiceSchema.channel), '\(forgery.replacingOccurrences(of: "'", with: "''"))'")
        }
        forged.raise()
        try await waitUntil("a warning about unsealed notifications") {
            server.log.contains("not sealed by an instance")
        }
        // A device that joins now is welcomed with the number PostgreSQL holds, not a forged one.
        let joining = try await RawDevice.exchange(server.url, token: token, [])
        #expect((joining.first?.latest ?? .max) < 1_000, "\(joining)")
        // A real change still reaches the reader.
        let replies = try await RawDevice.exchange(
            server.url, token: token,
            [
                DeviceMessage(
                    id: 1, kind: .push,
                    records: [WireRecord(key: "real", value: Data("1".utf8), wall: 1, counter: 0, origin: "o")])
            ])
        #expect(replies.last?.kind == .reply)
        let received = try await reading.messages.flatMap { $0.records ?? [] }
        #expect(received.map(\.key) == ["real"])
        // Warned once a minute at most, not once a notification.
        #expect(server.log.components(separatedBy: "not sealed by an instance").count == 2, "\(server.log)")
        #expect(forged.isRaised)
    }

    @Test func ownersWhoseNamesJoinAlikeHaveDifferentTags() {
        // Control characters are refused in tokens too; the tag does not rely on that.
        let pairs = [
            (Owner(user: "a", namespace: "b\nc"), Owner(user: "a\nb", namespace: "c")),
            (Owner(user: "ab", namespace: "c"), Owner(user: "a", namespace: "bc")),
            (Owner(user: "1:a", namespace: ""), Owner(user: "1", namespace: ":a")),
        ]
        for (one, other) in pairs {
            #expect(one.tag != other.tag, "\(one) and \(other)")
        }
    }

    @Test func theServerWarnsWhenOtherRolesMayConnect() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        // A new database lets PUBLIC connect.
        let open = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        try await waitUntil("the warning") { open.log.contains("may connect to the service's database") }
        // Its own database, CONNECT revoked from PUBLIC: no warning.
        try cluster.query("CREATE DATABASE defaults_sync_own OWNER defaults")
        try cluster.query("REVOKE CONNECT ON DATABASE defaults_sync_own FROM PUBLIC")
        try cluster.query("GRANT CONNECT ON DATABASE defaults_sync_own TO defaults")
        let own = cluster.url.replacingOccurrences(of: "/defaults_sync?", with: "/defaults_sync_own?")
        let closed = try await SyncServerProcess(database: own, keyFile: key.path)
        _ = try await RawDevice.exchange(closed.url, token: try await key.token(user: "own"), [])
        #expect(!closed.log.contains("may connect to the service's database"), "\(closed.log)")
    }
}

/// A role of the cluster with no grant on the service's tables, speaking through `psql`.
struct DatabaseNeighbour {
    static let psql =
        ["/usr/bin/psql"]
        + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))
        ?? []).sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin/psql" }

    let url: String

    init(_ cluster: PostgresCluster, name: String) throws {
        try cluster.query(
            "DO $$ BEGIN CREATE ROLE \(name) LOGIN PASSWORD 'neighbour'; EXCEPTION WHEN duplicate_object THEN END $$")
        url = "postgres://\(name):neighbour@127.0.0.1:\(cluster.port)/defaults_sync?sslmode=disable"
    }

    private var executable: String {
        Self.psql.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql"
    }

    /// Runs `sql` as this role.
    @discardableResult
    func run(_ sql: String) throws -> String {
        let result = try ChildProcess.run(executable, [url, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw PostgresCluster.ScriptError(message: "psql failed: \(result)") }
        return result.output
    }

    /// A `psql` of this role listening on the service's channel, reading more SQL from its input;
    /// it prints the notifications it heard after each statement.
    func listen() throws -> ChildProcess {
        let child = try ChildProcess(executable, [url, "-qAt"], input: .pipe)
        try child.write("LISTEN \(ServiceSchema.channel);\n")
        return child
    }
}
