import Foundation
import Synchronization
import TestSupport
import Testing

/// The database machine is lost: a Patroni cluster promotes a replica, and sync goes on through
/// it, reached through HAProxy or through a URL listing every node, by the service or by the
/// direct store. Nothing acknowledged is lost, nothing is stored twice, every device converges.
@Suite(
    .serialized,
    .enabled(if: PatroniCluster.isAvailable, "needs Debian's patroni, etcd-server, etcd-client, haproxy, postgresql"),
    // A Patroni cluster's processes on 2 cores starve the suites that hold 2,000 connections or
    // time a share: run apart, as `.ci/run` does.
    .enabled(
        if: ProcessInfo.processInfo.environment["DEFAULTS_SYNC_FAILOVER_TESTS"] == "1",
        "runs apart: DEFAULTS_SYNC_FAILOVER_TESTS=1 swift test --filter DatabaseFailoverTests"),
    .timeLimit(.minutes(10)))
struct DatabaseFailoverTests {
    enum Route: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Two service instances, each given every node (`target_session_attrs=read-write`).
        case serviceOnEveryNode
        /// Two service instances behind HAProxy, which routes to the primary by Patroni's check.
        case serviceThroughHAProxy
        /// Three machines on the direct store, given every node.
        case storeOnEveryNode

        var testDescription: String { rawValue }
    }

    @Test(arguments: Route.allCases)
    func losingThePrimaryTwiceWhileDevicesWriteLosesNothingAcknowledged(route: Route) async throws {
        try await PatroniCluster.with { cluster in
            let directory = try TemporaryDirectory()
            let key = try await TokenKey(in: directory)
            let database = route == .serviceThroughHAProxy ? cluster.haproxyURL : cluster.severalServersURL
            var instances: [SyncServerProcess] = []
            var urls = [database]
            var token: String?
            if route != .storeOnEveryNode {
                for _ in 0..<2 {
                    instances.append(
                        try await SyncServerProcess(
                            database: database, keyFile: key.path,
                            // Room for every value the writers write while the failovers take.
                            options: ["--ping-interval", "1", "--max-namespace-keys", "100000"]))
                }
                urls = instances.map(\.url)
                token = try await key.token(user: "failover")
            }
            do {
                try await writeThroughFailovers(
                    cluster: cluster, route: route, urls: urls, token: token, directory: directory)
            } catch {
                // What the instances saw, to tell a lost write from a stuck pool.
                for (index, instance) in instances.enumerated() {
                    Issue.record("instance \(index) logged:\n\(instance.log.suffix(6000))")
                }
                throw error
            }
        }
    }

    /// Writes from two of three devices while the primary is lost twice, then checks every device
    /// and the database.
    func writeThroughFailovers(
        cluster: PatroniCluster, route: Route, urls: [String], token: String?, directory: TemporaryDirectory
    ) async throws {
        let namespace = "com.example.failover"
        let devices = try await (0..<3).asyncMap { index in
            try await SyncProcess(
                configDirectory: directory.machine("device\(index)"), url: urls[index % urls.count],
                namespace: namespace, token: token)
        }
        try await devices[0].waitForSync()

        // Two devices write 5 values a round, 3 rounds a second, for as long as the failovers take.
        let failing = Failing()
        let failovers = Task {
            defer { failing.end() }
            try await Task.sleep(for: .seconds(2))
            let first = try cluster.killPrimary()
            try cluster.waitForPrimary()
            try cluster.restart(node: first)
            // The new primary needs a synchronous standby again before it may lose its machine.
            try cluster.waitForPrimary()
            try cluster.killPrimary()
            try cluster.waitForPrimary()
        }
        let rounds = try await (0..<2).asyncMap { writer in
            Task {
                var round = 0
                while failing.isOn || round < 5 {
                    try await devices[writer].send("fill w\(writer)-\(round) 5 v", answer: "ok")
                    round += 1
                    try await Task.sleep(for: .milliseconds(300))
                }
                // Acknowledged: `wait` returns once the database holds every change.
                try await devices[writer].send("wait", answer: "ok", timeout: .seconds(120))
                return round
            }
        }
        try await failovers.value
        let written = [try await rounds[0].value, try await rounds[1].value]

        // Every device holds every value.
        for device in devices {
            for (writer, count) in written.enumerated() {
                for round in 0..<count {
                    try await waitUntil("w\(writer)-\(round) everywhere", timeout: .seconds(120)) {
                        try await device.send("count w\(writer)-\(round) 5 v", answer: "count") == "count 5"
                    }
                }
            }
        }
        // In the database, once each. The service numbers each owner's changes without a gap:
        // a push stored twice would have taken numbers for nothing (a stored version is never
        // replaced by itself).
        let expected = 5 * written.reduce(0, +)
        if route == .storeOnEveryNode {
            let rows = try cluster.query(
                "SELECT count(*), count(DISTINCT key) FROM defaults_sync_values WHERE namespace = '\(namespace)'")
            #expect(rows == ["\(expected)|\(expected)"], "written \(written) rounds")
        } else {
            let rows = try cluster.query(
                """
                SELECT count(*), count(DISTINCT key), max(seq) FROM defaults_sync_service_values
                WHERE user_id = 'failover'
                """)
            #expect(rows == ["\(expected)|\(expected)|\(expected)"], "written \(written) rounds")
        }
    }
}

/// Whether the failovers are still under way.
private final class Failing: Sendable {
    private let state = Mutex(true)
    var isOn: Bool { state.withLock { $0 } }
    func end() { state.withLock { $0 = false } }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
