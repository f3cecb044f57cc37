import DefaultsSyncProtocol
import DefaultsSyncServer
import Foundation
import NIOWebSocket
import TestSupport
import Testing

/// What an operator sees and sets: metrics on their own listener, the database's password kept
/// off the command line, refusals, start, drain and stop in the log.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct OperatorTests {
    @Test func metricsAreServedOnTheirOwnListenerAndNotOnTheDevicesPort() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--metrics-port", "0"])
        let line = try await server.child.line(timeout: .seconds(60)) { $0.hasPrefix("metrics on ") }
        #expect(line.hasPrefix("metrics on 127.0.0.1:"), "\(line)")
        let metricsPort = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        #expect(metricsPort != server.port)
        let onDevicesPort = try Self.get("http://127.0.0.1:\(server.port)/metrics")
        #expect(onDevicesPort.status == "404", "\(onDevicesPort)")
        #expect(!onDevicesPort.body.contains("defaults_sync_"))
        let onMetricsPort = try Self.get("http://127.0.0.1:\(metricsPort)/metrics")
        #expect(onMetricsPort.status == "200", "\(onMetricsPort)")
        #expect(onMetricsPort.body.contains("defaults_sync_connections"), "\(onMetricsPort.body.prefix(500))")
        // The heap, read at the scrape: a running instance has some in use, within what it holds.
        func gauge(_ name: String) -> Double? {
            onMetricsPort.body.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        #if os(Linux)
        let inUse = try #require(gauge("defaults_sync_heap_in_use_bytes"))
        let held = try #require(gauge("defaults_sync_heap_held_bytes"))
        #expect(inUse > 100_000 && inUse <= held, "\(inUse) in use, \(held) held")
        #endif
        // Health stays with the devices, for the load balancer.
        #expect(try Self.get("http://127.0.0.1:\(server.port)/health").status == "200")
    }

    @Test func withoutAMetricsPortNoMetricsAreServed() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        #expect(try Self.get("http://127.0.0.1:\(server.port)/metrics").status == "404")
        #expect(!server.child.output.contains("metrics on"))
    }

    @Test func aRefusedTokenIsLoggedAtNoticeWithTheUserItClaimedEscapedAndTheClientsAddress() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        // Claims a user with a newline in its name, and is signed by no one.
        let token =
            [
                #"{"alg":"HS256","typ":"JWT"}"#,
                #"{"sub":"mallory\nforged notice line","ns":"com.example.app","exp":4102444800}"#,
            ].map { Self.base64URL(Data($0.utf8)) }.joined(separator: ".") + ".c2lnbmF0dXJl"
        let closed = try await RawDevice.connect(server.url, token: token) { inbound, _ in
            try await RawDevice.messages(inbound)
        }
        #expect(closed.code == .policyViolation)
        try await waitUntil("the refusal in the log") { server.log.contains("refused a connection") }
        let lines = server.log.split(separator: "\n")
        let refusal = try #require(lines.first { $0.contains("refused a connection") })
        #expect(refusal.contains(" notice "), "\(refusal)")
        #expect(refusal.contains(#""mallory\nforged notice line""#), "\(refusal)")
        #expect(refusal.contains("127.0.0.1:"), "\(refusal)")
        // The newline did not split the record.
        #expect(!lines.contains { $0.hasPrefix("forged notice line") }, "\(server.log)")
    }

    @Test func startDrainAndStopAreLogged() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "operator-drain")
        let welcomed = Flag()
        async let device = RawDevice.connect(server.url, token: token) { inbound, _ in
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            var messages: [ServerMessage] = []
            while let message = try await RawDevice.next(&iterator) {
                welcomed.raise()
                messages.append(message)
            }
            return messages
        }
        try await waitUntil("the device's welcome") { welcomed.isRaised }
        server.child.signal(SIGTERM)
        let termination = try await server.child.wait(timeout: .seconds(30))
        #expect(termination == .exited(0), "\(termination)")
        let closed = try await device
        #expect(closed.code == .normalClosure)
        let lines = server.log.split(separator: "\n")
        let start = lines.first { $0.contains("defaults-sync-server \(SyncServer.version) listening on") }
        #expect(start?.contains(" notice ") == true && start?.contains("outbox 524288 B") == true, "\(server.log)")
        #expect(lines.contains { $0.contains(" notice ") && $0.contains("draining 1 connection(s)") }, "\(server.log)")
        #expect(lines.contains { $0.contains(" notice ") && $0.hasSuffix("stopped") }, "\(server.log)")
    }

    @Test func theDatabaseURLComesFromAFileAndItsPasswordFromAnother() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let urlFile = directory.url.appendingPathComponent("database-url").path
        let passwordFile = directory.url.appendingPathComponent("database-password").path
        // The URL names no password.
        let url = cluster.url.replacingOccurrences(of: ":\(PostgresCluster.password)@", with: "@")
        #expect(!url.contains(PostgresCluster.password))
        _ = FileManager.default.createFile(
            atPath: urlFile, contents: Data("\(url)\n".utf8), attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(
            atPath: passwordFile, contents: Data("\(PostgresCluster.password)\n".utf8),
            attributes: [.posixPermissions: 0o600])
        let arguments = [
            "serve", "--database-url-file", urlFile, "--database-password-file", passwordFile, "--port", "0",
            "--token-key-file", key.path,
        ]
        let server = try ChildProcess(SyncServerProcess.executable, arguments)
        _ = try await server.line(timeout: .seconds(60)) { $0.hasPrefix("listening on ") }
        let commandLine = try String(contentsOfFile: "/proc/\(server.id)/cmdline", encoding: .utf8)
        #expect(!commandLine.contains(PostgresCluster.password))
        server.signal(SIGTERM)
        #expect(try await server.wait(timeout: .seconds(30)) == .exited(0))

        // A password file others can read is refused, as libpq refuses such a .pgpass.
        chmod(passwordFile, 0o644)
        let refused = try ChildProcess.run(SyncServerProcess.executable, arguments, timeout: .seconds(60))
        #expect(refused.status != 0)
        #expect(refused.error.contains("chmod 600"), "\(refused.error)")
    }

    @Test func aURLWithoutAPasswordTakesItFromLibpqsPasswordFile() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let passFile = directory.url.appendingPathComponent("pgpass").path
        _ = FileManager.default.createFile(
            atPath: passFile,
            contents: Data(
                "# host:port:database:user:password\nelsewhere:*:*:*:wrong\n127.0.0.1:\(cluster.port):*:defaults:\(PostgresCluster.password)\n"
                    .utf8),
            attributes: [.posixPermissions: 0o600])
        let url = cluster.url.replacingOccurrences(of: ":\(PostgresCluster.password)@", with: "@")
        let server = try ChildProcess(
            SyncServerProcess.executable, ["serve", "--port", "0", "--token-key-file", key.path],
            environment: ["DEFAULTS_SYNC_DATABASE_URL": url, "PGPASSFILE": passFile])
        _ = try await server.line(timeout: .seconds(60)) { $0.hasPrefix("listening on ") }
        // Stopped as it starts: what it asked of the database meanwhile is answered, not left
        // to its deadline of 30 s. (A request may still ask the pool in the moment between
        // `DatabasePool` letting requests go and PostgresNIO's `run()` beginning, which PostgresNIO
        // warns of and then answers: CI saw it once on a busy machine, so the warning is no proof.)
        server.signal(SIGTERM)
        #expect(try await server.wait(timeout: .seconds(20)) == .exited(0), "\(server.error)")
    }

    /// The status code and body of a GET, through curl.
    static func get(_ url: String) throws -> (status: String, body: String) {
        let result = try ChildProcess.run(
            "/usr/bin/curl", ["-s", "--max-time", "10", "-w", "\n%{http_code}", url], timeout: .seconds(20))
        let output = result.output
        let status = output.split(separator: "\n").last.map(String.init) ?? ""
        return (status, String(output.dropLast(status.count)))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
