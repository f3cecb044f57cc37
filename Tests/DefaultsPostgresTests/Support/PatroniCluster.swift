import Foundation
import TestSupport

/// A throwaway 3-node Patroni cluster (one etcd, three PostgreSQL servers with synchronous
/// replication, HAProxy routing to the primary) on loopback ports, started by
/// `Tests/patroni-cluster.sh`: how a test loses a database machine.
struct PatroniCluster: ThrowawayServer {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("patroni-cluster.sh")

    /// Whether Debian's patroni, etcd, haproxy and PostgreSQL are installed.
    static let isAvailable: Bool = (try? runScript(["available"])) != nil

    let directory: String
    /// The PostgreSQL port of each node, in order.
    let postgresPorts: [Int]
    /// HAProxy's port, which leads to the primary.
    let haproxyPort: Int

    /// The database through HAProxy.
    var haproxyURL: String {
        "postgres://defaults:\(PostgresCluster.password)@127.0.0.1:\(haproxyPort)/defaults_sync?sslmode=disable"
    }

    /// The database as a list of every node, connecting to the one that accepts writes.
    var severalServersURL: String {
        let hosts = postgresPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",")
        return "postgres://defaults:\(PostgresCluster.password)@\(hosts)/defaults_sync"
            + "?sslmode=disable&target_session_attrs=read-write"
    }

    /// Starts a cluster on ports from a free base (each cluster takes a block of them).
    static func start() throws -> PatroniCluster {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let base = try PostgresCluster.freePort(block: 12)
            do {
                let directory =
                    try runScript(["start", "\(base)"], timeout: .seconds(400))
                    .split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
                let ports = try String(contentsOfFile: "\(directory)/ports", encoding: .utf8)
                var values: [String: String] = [:]
                for line in ports.split(whereSeparator: \.isNewline) {
                    let parts = line.split(separator: "=", maxSplits: 1)
                    if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
                }
                guard let haproxy = values["haproxy"].flatMap({ Int($0) }),
                    let postgres = values["postgres"]?.split(separator: ",").compactMap({ Int($0) }),
                    postgres.count == 3
                else { throw PostgresCluster.ScriptError(message: "patroni-cluster.sh wrote no ports: \(ports)") }
                return PatroniCluster(directory: directory, postgresPorts: postgres, haproxyPort: haproxy)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? PostgresCluster.ScriptError(message: "could not start a Patroni cluster")
    }

    /// The primary node's index (1 to 3).
    func primary() throws -> Int {
        try Self.node(in: Self.runScript(["primary", directory]))
    }

    /// Loses the primary's machine: SIGKILL of its Patroni, then of its PostgreSQL processes.
    /// Returns the node killed; does not wait for the failover.
    @discardableResult
    func killPrimary() throws -> Int {
        try Self.node(in: Self.runScript(["kill-primary", directory]))
    }

    /// Waits until a node is primary and another its synchronous standby; returns the primary.
    @discardableResult
    func waitForPrimary(timeout: Int = 90) throws -> Int {
        try Self.node(in: Self.runScript(["wait-primary", directory, "\(timeout)"], timeout: .seconds(timeout + 30)))
    }

    /// Starts node `index` again: it rejoins as a replica.
    func restart(node index: Int) throws {
        try Self.runScript(["restart-node", directory, "\(index)"], timeout: .seconds(120))
    }

    /// Runs `sql` as the superuser on the primary, in the sync database; returns the rows, one a
    /// line, columns separated by `|`.
    @discardableResult
    func query(_ sql: String) throws -> [String] {
        try Self.runScript(["query", directory, sql, "defaults_sync"]).split(whereSeparator: \.isNewline).map(
            String.init)
    }

    func destroy() { _ = try? Self.runScript(["destroy", directory], timeout: .seconds(60)) }

    private static func node(in output: String) throws -> Int {
        guard let first = output.split(whereSeparator: \.isWhitespace).first, let node = Int(first) else {
            throw PostgresCluster.ScriptError(message: "patroni-cluster.sh named no node: \(output)")
        }
        return node
    }

    @discardableResult
    static func runScript(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> String {
        let result = try ChildProcess.run("/bin/bash", [script.path] + arguments, timeout: timeout)
        guard result.status == 0 else {
            throw PostgresCluster.ScriptError(
                message: "patroni-cluster.sh \(arguments.joined(separator: " ")) failed: \(result)")
        }
        return result.output
    }
}
