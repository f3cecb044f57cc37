import DefaultsSyncProtocol
import DefaultsSyncServer
import Foundation
import NIOWebSocket
import TestSupport
import Testing

/// Each user's settings follow them across their own machines and reach no one else, whichever
/// instance each machine connects to.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct AccountsTests {
    @Test func twoMachinesOfOneUserOnTwoInstancesSeeEachOthersChangesAndNoOneElseDoes() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let first = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let second = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        // The token command prints the token and nothing else.
        let printed = try ChildProcess.run(
            SyncServerProcess.executable,
            [
                "token", "--key-file", key.path, "--user", "alice", "--namespace", "com.example.app", "--expires-in",
                "1h",
            ])
        #expect(printed.status == 0)
        let alice = printed.output.trimmingCharacters(in: .newlines)
        #expect(!alice.contains("\n") && alice.split(separator: ".").count == 3)
        let bob = try await key.token(user: "bob")

        let laptop = try await SyncProcess(
            configDirectory: directory.machine("laptop"), url: first.url, namespace: "-", token: alice)
        let desktop = try await SyncProcess(
            configDirectory: directory.machine("desktop"), url: second.url, namespace: "-", token: alice)
        let stranger = try await SyncProcess(
            configDirectory: directory.machine("stranger"), url: first.url, namespace: "-", token: bob)

        try await laptop.set("theme", "dark")
        try await desktop.waitUntil("theme", is: "dark")
        // Keys declared after connecting, as lazy `static let` keys are, on both machines.
        try await desktop.send("fill late 300 v", answer: "ok")
        try await laptop.waitForSync()
        try await waitUntil("300 late keys on the laptop") {
            try await laptop.send("count late 300 v", answer: "count") == "count 300"
        }
        try await stranger.set("theme", "light")
        try await stranger.waitForSync()
        try await laptop.waitForSync()
        try await desktop.waitForSync()
        #expect(try await stranger.get("theme") == "light")
        #expect(try await laptop.get("theme") == "dark")
        #expect(try await stranger.send("count late 300 v", answer: "count") == "count 0")
        let rows = try cluster.query(
            "SELECT user_id || ' ' || count(*) FROM defaults_sync_service_values GROUP BY user_id ORDER BY user_id",
            database: "defaults_sync")
        #expect(rows == ["alice 301", "bob 1"])
        _ = (first, second)
    }

    @Test func refusedTokensReadAndWriteNothing() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let other = try await TokenKey(in: try TemporaryDirectory())
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let valid = try await key.token(user: "carol")
        var tampered = Array(valid)
        let middle = valid.firstIndex(of: ".").map { valid.distance(from: valid.startIndex, to: $0) + 5 } ?? 5
        tampered[middle] = tampered[middle] == "A" ? "B" : "A"
        let cases: [(String, String?, String)] = [
            ("missing", nil, "no token"),
            ("tampered", String(tampered), "signature"),
            ("signed with another key", try await other.token(user: "carol"), "signature"),
            ("expired", try await key.token(user: "carol", lifetime: .seconds(-60)), "expired"),
            ("not a JWT", "not-a-token", "not a JWT"),
        ]
        let before = try cluster.query("SELECT count(*) FROM defaults_sync_service_values", database: "defaults_sync")
        for (name, token, reason) in cases {
            let close = try await refusal(by: server, of: token)
            #expect(close.messages.isEmpty, "\(name): \(close.messages)")
            #expect(close.code == .policyViolation, "\(name)")
            #expect(close.reason?.contains(reason) == true, "\(name): \(close.reason ?? "no reason")")
        }
        let after = try cluster.query("SELECT count(*) FROM defaults_sync_service_values", database: "defaults_sync")
        #expect(before == after)
    }

    /// How `server` closes a connection with `token` that pushes a record anyway.
    private func refusal(by server: SyncServerProcess, of token: String?) async throws -> RawDevice.Closed {
        try await RawDevice.connect(server.url, token: token, deadline: .seconds(30)) { inbound, outbound in
            let push = DeviceMessage(
                id: 1, kind: .push,
                records: [WireRecord(key: "owned", value: Data("x".utf8), wall: 1, counter: 0, origin: "evil")])
            try? await outbound.write(.text(try SyncProtocol.encode(push)))
            return try await RawDevice.messages(inbound)
        }
    }

    @Test func aTokenForAnotherNamespaceSeesNothingOfThisOne() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let app = try await SyncProcess(
            configDirectory: directory.machine("app"), url: server.url, namespace: "-",
            token: try await key.token(user: "dave", namespace: "com.example.app"))
        let otherApp = try await SyncProcess(
            configDirectory: directory.machine("other"), url: server.url, namespace: "-",
            token: try await key.token(user: "dave", namespace: "com.example.other"))
        try await app.set("secret", "app-only")
        try await app.waitForSync()
        try await otherApp.set("secret", "other-only")
        try await otherApp.waitForSync()
        try await app.waitForSync()
        #expect(try await otherApp.get("secret") == "other-only")
        #expect(try await app.get("secret") == "app-only")
        // A new machine of each namespace takes that namespace's value, and only it.
        let newApp = try await SyncProcess(
            configDirectory: directory.machine("new-app"), url: server.url, namespace: "-", keys: ["secret"],
            token: try await key.token(user: "dave", namespace: "com.example.app"))
        try await newApp.waitUntil("secret", is: "app-only")
        let rows = try cluster.query(
            """
            SELECT namespace || ' ' || count(*) FROM defaults_sync_service_values WHERE user_id = 'dave'
            GROUP BY namespace ORDER BY namespace
            """, database: "defaults_sync")
        #expect(rows == ["com.example.app 1", "com.example.other 1"])
    }

    @Test func rowLevelSecurityShowsTheServersRoleNoRowWithoutAnOwner() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let machine = try await SyncProcess(
            configDirectory: directory.machine("erin"), url: server.url, namespace: "-",
            token: try await key.token(user: "erin"))
        try await machine.set("a", "1")
        try await machine.waitForSync()
        // The server's own role, `defaults`, owns the table; without an owner declared, it sees nothing.
        let hidden = try cluster.query(
            "SET ROLE defaults; SELECT count(*) FROM defaults_sync_service_values", database: "defaults_sync")
        #expect(hidden == ["0"])
        let own = try cluster.query(
            """
            SET ROLE defaults; SELECT set_config('defaults_sync.user', 'erin', false), \
            set_config('defaults_sync.namespace', 'com.example.app', false); \
            SELECT count(*) FROM defaults_sync_service_values
            """, database: "defaults_sync")
        #expect(own.last == "1")
        // Nor can it write a row for someone else while declared as erin.
        #expect(throws: (any Error).self) {
            try cluster.query(
                """
                SET ROLE defaults; SELECT set_config('defaults_sync.user', 'erin', false), \
                set_config('defaults_sync.namespace', 'com.example.app', false); \
                INSERT INTO defaults_sync_service_values (user_id, namespace, key, clock_wall, clock_counter, \
                clock_origin, seq) VALUES ('mallory', 'com.example.app', 'k', 1, 0, 'x', 0)
                """, database: "defaults_sync")
        }
        _ = server
    }
}
