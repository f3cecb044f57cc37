import Foundation
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// Instances come and go, PostgreSQL restarts: devices reconnect, and nothing acknowledged is lost.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct ResilienceTests {
    @Test(.enabled(if: NginxProxy.isAvailable, "needs Debian's nginx package"))
    func killingAnInstanceWhileMachinesWriteThroughItLosesNothingAcknowledged() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let first = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--ping-interval", "1"])
        let second = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--ping-interval", "1"])
        let proxy = try await NginxProxy(upstreams: [first.port, second.port], in: directory)
        let token = try await key.token(user: "grace")
        let writer = try await SyncProcess(
            configDirectory: directory.machine("writer"), url: proxy.url, namespace: "-", token: token)
        try await writer.waitForSync()
        // The instance the writer is connected to is the one killed.
        let writersInstance = try await first.connections() == 1 ? first : second
        #expect(try await first.connections() + second.connections() == 1)
        let reader = try await SyncProcess(
            configDirectory: directory.machine("reader"), url: proxy.url, namespace: "-", token: token)
        // Acknowledged: `wait` returns once the service stored every change.
        try await writer.send("fill before 200 v", answer: "ok")
        try await writer.waitForSync()
        let writing = Task {
            for round in 0..<10 {
                try await writer.send("fill during-\(round) 20 v", answer: "ok")
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        writersInstance.kill()
        try await writing.value
        try await writer.send("fill after 200 v", answer: "ok")
        try await writer.waitForSync()
        let prefixes = ["before"] + (0..<10).map { "during-\($0)" } + ["after"]
        for prefix in prefixes {
            let count = prefix.hasPrefix("during") ? 20 : 200
            try await waitUntil("\(prefix) on the reader") {
                try await reader.send("count \(prefix) \(count) v", answer: "count") == "count \(count)"
            }
        }
        let stored = try cluster.query(
            "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = 'grace'", database: "defaults_sync")
        #expect(stored == ["600"])
        _ = (second, proxy)
    }

    @Test func restartingPostgreSQLWhileBothInstancesRunConverges() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let first = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let second = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "heidi")
        let one = try await SyncProcess(
            configDirectory: directory.machine("one"), url: first.url, namespace: "-", token: token)
        let two = try await SyncProcess(
            configDirectory: directory.machine("two"), url: second.url, namespace: "-", keys: ["k"], token: token)
        try await one.set("k", "before")
        try await two.waitUntil("k", is: "before")
        try cluster.stop(mode: .immediate)
        try await one.set("k", "while-down")
        try await two.set("other", "from-two-while-down")
        try await Task.sleep(for: .seconds(1))
        try cluster.restart()
        try await two.waitUntil("k", is: "while-down")
        try await one.waitUntil("other", is: "from-two-while-down")
        // The instances listen again: a change after the restart still reaches the other instance.
        try await two.set("k", "after")
        try await one.waitUntil("k", is: "after")
    }

    @Test func sigtermClosesEveryConnectionAndTheInstanceExits() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "ivan")
        let machine = try await SyncProcess(
            configDirectory: directory.machine("one"), url: server.url, namespace: "-", token: token)
        try await machine.set("k", "v")
        try await machine.waitForSync()
        server.child.signal(SIGTERM)
        let termination = try await server.child.wait(timeout: .seconds(30))
        #expect(termination == .exited(0), "\(termination); \(server.log.suffix(2000))")
        try await waitUntil("the machine to notice") {
            try await machine.send("status", answer: "status").contains("connected=false")
        }
    }

    @Test func anInstanceWhoseDatabaseStopsAnsweringStillStopsOnSIGTERM() async throws {
        // A cluster of its own, since this test freezes it.
        let cluster = try PostgresCluster.start()
        defer {
            try? cluster.thaw()
            cluster.destroy()
        }
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "olga")
        let machine = try await SyncProcess(
            configDirectory: directory.machine("one"), url: server.url, namespace: "-", token: token)
        try await machine.set("k", "v")
        try await machine.waitForSync()
        // The database's machine hangs: its connections stay open and answer nothing. A push is on
        // its way to it as the instance is told to stop (the machine sends it within moments), and
        // the instance reads its directory of nodes every second.
        try cluster.freeze()
        try await machine.set("k", "while-frozen")
        try await Task.sleep(for: .seconds(1))
        let signalled = ContinuousClock.now
        server.child.signal(SIGTERM)
        // Each request has its deadline (30 s), each pool its own: the stop ends within its own
        // limit, not cancelled, and so does not need the process to be ended.
        let termination = try await server.child.wait(timeout: .seconds(120))
        let stop = ContinuousClock.now - signalled
        #expect(termination == .exited(0), "\(termination); \(server.log.suffix(3000))")
        #expect(stop < SyncServer.longestGracefulStop, "\(stop); \(server.log.suffix(3000))")
        #expect(
            server.log.contains("stopped") && !server.log.contains("the stop has taken"), "\(server.log.suffix(3000))")
    }

    @Test func anInstanceWhosePortIsTakenSaysWhyAndExitsWithoutTheWatchdog() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let first = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        // Its port's service fails once the instance runs: the group cancels the others, and the
        // cancelled instance ends by itself, well before the watchdog would end it, saying why and
        // nothing of the cancellation.
        let second = try ChildProcess.run(
            SyncServerProcess.executable,
            ["serve", "--database-url", cluster.url, "--port", "\(first.port)", "--token-key-file", key.path],
            timeout: .seconds(120))
        #expect(second.status == 1, "\(second)")
        #expect(second.error.lowercased().contains("address already in use"), "\(second.error.suffix(3000))")
        #expect(!second.error.contains("the stop has not ended"), "\(second.error.suffix(3000))")
        let cancellationsWarnedOf = second.error.split(separator: "\n").filter { line in
            (line.contains(" warning ") || line.contains(" error ")) && line.contains("CancellationError")
        }
        #expect(cancellationsWarnedOf.isEmpty, "\(second.error.suffix(3000))")
        #expect(try await first.connections() == 0, "the first instance still answers")
    }

    @Test func aDatabaseMigratedByANewerServerIsRefusedAndLeftAsItIs() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        // A server migrates the schema; a newer one (as far as this one knows) then did too.
        _ = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let version = "SELECT version FROM defaults_sync_service_schema"
        let current = try cluster.query(version, database: "defaults_sync")
        try cluster.query("UPDATE defaults_sync_service_schema SET version = 999", database: "defaults_sync")
        defer {
            _ = try? cluster.query(
                "UPDATE defaults_sync_service_schema SET version = \(current.first ?? "1")", database: "defaults_sync")
        }
        let refused = try ChildProcess.run(
            SyncServerProcess.executable,
            ["serve", "--database-url", cluster.url, "--port", "0", "--token-key-file", key.path],
            timeout: .seconds(60))
        #expect(refused.status != 0)
        #expect(
            refused.error.contains("version 999") && refused.error.contains("update defaults-sync-server"),
            "\(refused.error)")
        #expect(try cluster.query(version, database: "defaults_sync") == ["999"])
    }
}
