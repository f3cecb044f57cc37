import DefaultsSyncServer
import Foundation
import TestSupport
import Testing

/// A running `defaults-sync-server serve` on a free loopback port, over the suite's PostgreSQL.
final class SyncServerProcess: Sendable {
    static let executable = builtExecutable("defaults-sync-server")

    let child: ChildProcess
    let port: Int
    var url: String { "ws://127.0.0.1:\(port)" }

    /// Starts an instance, with `environment` on top of this process's, and waits until it accepts
    /// connections.
    init(
        database: String, keyFile: String, port: Int = 0, options: [String] = [], environment: [String: String] = [:]
    ) async throws {
        child = try ChildProcess(
            Self.executable,
            ["serve", "--database-url", database, "--port", "\(port)", "--token-key-file", keyFile] + options,
            environment: environment)
        let line = try await child.line(timeout: .seconds(60)) { $0.hasPrefix("listening on ") }
        guard let bound = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw PostgresCluster.ScriptError(message: "no port in \(line)")
        }
        self.port = bound
    }

    /// The devices connected, as `GET /health` says.
    func connections() async throws -> Int {
        let result = try ChildProcess.run(
            "/usr/bin/curl", ["-s", "--max-time", "10", "http://127.0.0.1:\(port)/health"], timeout: .seconds(20))
        struct Health: Decodable { var connections: Int }
        return try JSONDecoder().decode(Health.self, from: result.outputData).connections
    }

    /// What the server logged so far.
    var log: String { child.error }

    func kill() { child.kill() }
}

/// A key file of 32 random bytes, and tokens signed with it.
struct TokenKey: Sendable {
    let path: String
    let tokens: AccessTokens

    init(in directory: TemporaryDirectory) async throws {
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        path = directory.url.appendingPathComponent("token.key").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
        tokens = try await AccessTokens(keyFile: path)
    }

    func token(user: String, namespace: String = "com.example.app", lifetime: Duration = .seconds(3600)) async throws
        -> String
    {
        try await tokens.sign(user: user, namespace: namespace, lifetime: lifetime)
    }
}

/// nginx from Debian's package in front of server instances, on a free loopback port: a device
/// connected through it moves to another instance when its own goes away.
final class NginxProxy: Sendable {
    static let executable = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var isAvailable: Bool { executable != nil }

    let child: ChildProcess
    let port: Int
    var url: String { "ws://127.0.0.1:\(port)" }

    init(upstreams: [Int], in directory: TemporaryDirectory) async throws {
        let prefix = directory.url.appendingPathComponent("nginx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: prefix.appendingPathComponent("logs"), withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try PostgresCluster.freePort()
            let configuration = """
                daemon off;
                worker_processes 1;
                pid \(prefix.path)/nginx.pid;
                error_log \(prefix.path)/logs/error.log warn;
                events { worker_connections 4096; }
                http {
                    access_log off;
                    client_body_temp_path \(prefix.path)/body;
                    proxy_temp_path \(prefix.path)/proxy;
                    upstream sync {
                        \(upstreams.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=2s;" }.joined(separator: "\n        "))
                    }
                    server {
                        listen 127.0.0.1:\(port);
                        location / {
                            proxy_pass http://sync;
                            proxy_http_version 1.1;
                            proxy_set_header Upgrade $http_upgrade;
                            proxy_set_header Connection "upgrade";
                            proxy_connect_timeout 2s;
                            proxy_read_timeout 3600s;
                        }
                    }
                }
                """
            let file = prefix.appendingPathComponent("nginx.conf")
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            let child = try ChildProcess(Self.executable ?? "nginx", ["-p", prefix.path, "-c", file.path])
            if (try? await waitUntil("nginx to listen", timeout: .seconds(10), { Self.accepts(port) })) != nil {
                self.child = child
                self.port = port
                return
            }
            child.kill()
            lastError = PostgresCluster.ScriptError(message: "nginx did not start: \(child.error)")
        }
        throw lastError!
    }

    /// Whether something accepts TCP connections on the loopback port.
    static func accepts(_ port: Int) -> Bool { LoopbackSocket(port: port) != nil }

    deinit {
        // A fast stop, waited for: the master stops its workers, which a graceful one (SIGQUIT)
        // keeps while WebSockets stay open, and which outlive a master killed first.
        child.signal(SIGTERM)
        _ = try? child.wait(timeout: .seconds(10))
    }
}
