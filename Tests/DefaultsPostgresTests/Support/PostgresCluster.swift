import Foundation
import Synchronization
import TestSupport
import Testing

/// A throwaway PostgreSQL server, started by `Tests/postgres-cluster.sh` in a temp dir on a free
/// loopback port, with a user `defaults` who logs in with a password.
struct PostgresCluster: ThrowawayServer {
    static let password = "defaults-test-password"
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("postgres-cluster.sh")

    /// Whether Debian's PostgreSQL server binaries are installed.
    static let isAvailable: Bool = (try? runScript(["available"])) != nil

    /// The cluster of the running ``Shared`` suite.
    @TaskLocal static var shared: PostgresCluster?

    let directory: String
    let port: Int

    var url: String { url(password: Self.password) }

    func url(password: String) -> String {
        "postgres://defaults:\(password)@127.0.0.1:\(port)/defaults_sync?sslmode=disable"
    }

    static func start() throws -> PostgresCluster {
        var lastError: (any Error)?
        // A free port can be taken between finding and binding it: try a few.
        for _ in 0..<3 {
            let port = try freePort()
            do {
                let directory = try runScript(["start", "\(port)"]).trimmingCharacters(in: .whitespacesAndNewlines)
                return PostgresCluster(directory: directory, port: port)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ScriptError(message: "could not start PostgreSQL")
    }

    /// Stops the server, keeping its data. `immediate` kills every server process at once, as a
    /// crash would; `fast` tells the clients first.
    func stop(mode: StopMode = .fast) throws { try Self.runScript(["stop", directory, mode.rawValue]) }

    enum StopMode: String, Sendable, CaseIterable {
        case fast, immediate
    }
    func restart() throws { try Self.runScript(["restart", directory]) }
    /// Stops every server process where it is (SIGSTOP): its connections stay open and nothing is
    /// answered, as when its machine hangs. ``thaw()`` lets them go on.
    func freeze() throws { try Self.runScript(["freeze", directory]) }
    func thaw() throws { try Self.runScript(["thaw", directory]) }
    func destroy() { _ = try? Self.runScript(["destroy", directory]) }

    /// Runs `sql` as the superuser in `database`; returns the rows, one a line.
    @discardableResult
    func query(_ sql: String, database: String = "postgres") throws -> [String] {
        try Self.runScript(["query", directory, sql, database]).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// The ids of the server processes serving the connections of `user` (a role of this cluster).
    func backends(of user: String) throws -> [pid_t] {
        try query("SELECT pid FROM pg_stat_activity WHERE usename = '\(user)'").compactMap { pid_t($0) }
    }

    struct ScriptError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Runs the script and returns its standard output.
    @discardableResult
    static func runScript(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.run("/bin/bash", [script.path] + arguments)
        guard result.status == 0 else {
            throw ScriptError(
                message: "postgres-cluster.sh \(arguments.joined(separator: " ")) failed: \(result)")
        }
        return result.output
    }

    /// A loopback port nothing listens on right now, below the kernel's ephemeral range: a port
    /// the kernel handed out (bound to 0, then closed) may be handed out again at once to a
    /// server another test starts with `--port 0`, which then holds it first (seen in CI: the
    /// deployment article's second instance failed with "Address already in use").
    static func freePort() throws -> Int {
        try freePort(block: 1)
    }

    /// The first of `block` consecutive loopback ports nothing listens on right now, as
    /// ``freePort()`` finds one.
    static func freePort(block: Int) throws -> Int {
        for _ in 0..<500 {
            let port = lastPortTried.withLock { last in
                last = last + block >= 32_000 ? 20_000 : last + block
                return last
            }
            if try (port..<port + block).allSatisfy(canBind) { return port }
        }
        throw ScriptError(message: "no \(block) free loopback ports between 20000 and 32000")
    }

    /// The last port tried; the first is random, so that two test processes rarely pick alike.
    private static let lastPortTried = Mutex(Int.random(in: 20_000..<32_000))

    private static func canBind(_ port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ScriptError(message: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
        }
    }

    /// A suite trait: one cluster for every test of the suite, stopped when the suite ends.
    struct Shared: SuiteTrait, TestScoping {
        var isRecursive: Bool { false }

        func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            try await PostgresCluster.with { cluster in
                try await PostgresCluster.$shared.withValue(cluster) {
                    try await function()
                }
            }
        }
    }
}

extension Trait where Self == PostgresCluster.Shared {
    /// Starts one throwaway PostgreSQL server for the suite (``PostgresCluster/shared``).
    static var postgresCluster: Self { Self() }
}

/// A server a test starts for itself (``PostgresCluster``, ``PatroniCluster``) and destroys when done.
protocol ThrowawayServer: Sendable {
    static func start() throws -> Self
    func destroy()
}

extension ThrowawayServer {
    /// Runs `body` with a new server, destroyed afterwards even when `body` throws.
    static func with<Result>(_ body: (Self) async throws -> Result) async throws -> Result {
        let server = try start()
        do {
            let result = try await body(server)
            server.destroy()
            return result
        } catch {
            server.destroy()
            throw error
        }
    }
}
