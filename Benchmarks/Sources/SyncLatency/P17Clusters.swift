import Foundation

/// P17: P11's 1,000 device connections on two PostgreSQL clusters beside one, in the same run.
/// Two throwaway clusters of its own (`Tests/postgres-cluster.sh`): first two instances over the
/// first cluster alone (tokens naming no node), then two fresh instances whose directory, in the
/// first cluster, holds node `a` (a database of the first cluster) and node `b` (one of the
/// second), each user assigned at its token (`token --assign-node`). The line gives both runs'
/// latencies and, for the second, the users and rows each cluster holds.
enum P17Clusters {
    /// The database each node's rows go to, on either cluster (beside `defaults_sync`, the
    /// instances' own, which holds the directory).
    static let nodeDatabase = "p17_node"
    /// Room for every user on either node alone: the directory balances by the share taken.
    static let capacity = 10_000
    /// The goals: each node within this fraction of half the users and rows, and the p99 of two
    /// clusters within this many times one cluster's (and ≤ 50 ms).
    static let balanceTolerance = 0.10
    static let p99Ratio = 1.5

    /// Runs P17 and prints its line, or why it did not run.
    @MainActor static func run(namespace: String, options: [String]) {
        guard (try? Cluster.run(["available"])) != nil else {
            print("P17 skipped: Tests/postgres-cluster.sh says PostgreSQL cannot run here (Debian's postgresql)")
            fflush(nil)
            return
        }
        var clusters: [String] = []
        defer { clusters.forEach(Cluster.destroy) }
        do {
            var ports: [Int] = []
            for _ in 0..<2 {
                let (directory, port) = try Cluster.start()
                clusters.append(directory)
                ports.append(port)
                _ = try Cluster.run(["query", directory, "CREATE DATABASE \(nodeDatabase) OWNER defaults"])
            }
            try measure(clusters: clusters, ports: ports, namespace: namespace + "-p17", options: options)
        } catch {
            print("P17 failed: \(error)")
        }
        fflush(nil)
    }

    @MainActor private static func measure(clusters: [String], ports: [Int], namespace: String, options: [String])
        throws
    {
        let ownDatabase = Cluster.url(port: ports[0])

        // One cluster: the instances' own database serves every user.
        let (one, oneCPU) = try {
            let single = try Service(database: ownDatabase, instances: 2, options: options)
            defer { single.stop() }
            let before = ClusterCPU.seconds(of: clusters[0])
            let run = try ordinaryDevices(users: "p17-one", namespace: namespace, on: single)
            return (run, ClusterCPU.seconds(of: clusters[0]) - before)
        }()

        // Two clusters: nodes a and b, found by each instance in its environment (a node's
        // reference holds no password).
        let nodes = ["a", "b"]
        let environment = Dictionary(
            uniqueKeysWithValues: nodes.indices.map {
                ("P17_NODE_\(nodes[$0].uppercased())", Cluster.url(port: ports[$0], database: nodeDatabase))
            })
        for node in nodes {
            _ = try Service.command(
                ["nodes", "add", node, "--url", "env:P17_NODE_\(node.uppercased())", "--capacity", "\(capacity)"],
                database: ownDatabase)
        }
        let spread = try Service(database: ownDatabase, instances: 2, options: options, environment: environment)
        defer { spread.stop() }
        spread.assignsNodes = true
        // Includes the 250 tokens minted with `--assign-node`, each asking the directory in the
        // first cluster.
        let before = clusters.map(ClusterCPU.seconds(of:))
        let two = try ordinaryDevices(users: "p17-two", namespace: namespace, on: spread)
        let twoCPU = zip(clusters.map(ClusterCPU.seconds(of:)), before).map { $0 - $1 }

        let users = try Cluster.run([
            "query", clusters[0],
            "SELECT node || ' ' || count(*) FROM defaults_sync_service_assignments "
                + "WHERE user_id LIKE 'p17-two-%' GROUP BY node ORDER BY node", "defaults_sync",
        ])
        .split(whereSeparator: \.isNewline).reduce(into: [String: Int]()) { counts, line in
            let parts = line.split(separator: " ")
            if parts.count == 2 { counts[String(parts[0])] = Int(parts[1]) }
        }
        let rows = try clusters.map { cluster in
            Int(
                try Cluster.run([
                    "query", cluster,
                    "SELECT count(*) FROM defaults_sync_service_values WHERE namespace = '\(namespace)'",
                    nodeDatabase,
                ])) ?? 0
        }
        report(
            one: one, two: two, users: nodes.map { users[$0] ?? 0 }, rows: rows, cpu: (one: oneCPU, two: twoCPU))
    }

    @MainActor private static func report(
        one: OrdinaryRun, two: OrdinaryRun, users: [Int], rows: [Int], cpu: (one: Double, two: [Double])
    ) {
        /// Whether each of `counts` is within the tolerance of an even share of their sum.
        func balanced(_ counts: [Int]) -> Bool {
            let even = Double(counts.reduce(0, +)) / Double(counts.count)
            return even > 0 && counts.allSatisfy { abs(Double($0) - even) <= even * balanceTolerance }
        }
        var missed: [String] = []
        if !balanced(users) { missed.append("users") }
        if !balanced(rows) { missed.append("rows") }
        if !(two.all.p99 <= 50 && two.all.p99 <= one.all.p99 * p99Ratio) { missed.append("p99") }
        if !(one.complete && two.complete) { missed.append("lost or duplicated") }
        print(
            "P17 \(two.connections) device connections (\(two.users) users x \(two.devicesPerUser), P11's workload) "
                + "on 2 PostgreSQL clusters (nodes a and b): users \(users[0]) and \(users[1]), rows \(rows[0]) and "
                + "\(rows[1]), PostgreSQL's CPU time "
                + String(format: "%.1f s and %.1f s", cpu.two[0], cpu.two[1])
                + "; \(two.deliveriesDescription), \(two.duplicated) duplicated, "
                + String(format: "p50 %.2f ms, p99 %.2f ms, max %.2f ms", two.all.p50, two.all.p99, two.all.max)
                + "; on 1 cluster just before (\(one.connections) connections): \(one.received) of \(one.expected), "
                + "\(one.duplicated) duplicated, "
                + String(
                    format: "p50 %.2f ms, p99 %.2f ms, PostgreSQL's CPU time %.1f s (2 clusters' p99: %.2fx)",
                    one.all.p50, one.all.p99, cpu.one, two.all.p99 / one.all.p99)
                + "; \(two.machineDescription)"
                + " (target half the users and rows on each, ±10 %; p99 <= 50 ms and <= 1.5x one cluster's; none "
                + "lost: " + (missed.isEmpty ? "met" : "NOT met: " + missed.joined(separator: ", ")) + ")")
        fflush(nil)
    }
}

/// The CPU time a throwaway cluster (`Tests/postgres-cluster.sh`'s directory) has spent: its
/// postmaster's, its live processes' and that of those it has reaped (closed connections), from
/// `/proc`. What one cluster's share of the load costs it, compared between runs.
enum ClusterCPU {
    static func seconds(of directory: String) -> Double {
        guard let pidLine = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let postmaster = Int32(pidLine.prefix { !$0.isNewline })
        else { return .nan }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let fields = statFields(of: pid) else { continue }
            // After the command's closing parenthesis: state (0), ppid (1), ..., utime (11),
            // stime (12), cutime (13), cstime (14).
            if pid == postmaster {
                total += fields[11...14].reduce(0, +)
            } else if fields[1] == Double(postmaster) {
                total += fields[11] + fields[12]
            }
        }
        return total / ticks
    }

    /// The numeric fields of `/proc/PID/stat` after the command (the state counted as 0).
    private static func statFields(of pid: Int32) -> [Double]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ").map { Double($0) ?? 0 }
        return fields.count > 14 ? fields : nil
    }
}
