import DefaultsSyncProtocol
import Foundation
import Synchronization
import TestSupport
import Testing

/// Users spread over two PostgreSQL clusters by the directory of nodes: assigned at their first
/// token to the node with the most room, served from it by every instance, refused as moved with a
/// token naming another node, and moved with every value their devices hold when their node is
/// drained, without anyone touching the devices.
@Suite(
    .serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster,
    .timeLimit(.minutes(8)))
struct NodesTests {
    /// The instances' own database (the directory, and node `a`) and a second cluster (node `b`).
    struct Deployment {
        let first: PostgresCluster
        let second: PostgresCluster
        let key: TokenKey
        let folder: TemporaryDirectory
        /// Where every instance finds each node's URL: in its environment (`env:NODE_A_URL`).
        var environment: [String: String] { ["NODE_A_URL": first.url, "NODE_B_URL": second.url] }

        /// `defaults-sync-server nodes ARGUMENTS`, the directory's URL from the environment.
        @discardableResult
        func nodes(_ arguments: String...) throws -> ChildProcess.Result {
            try ChildProcess.run(
                SyncServerProcess.executable, ["nodes"] + arguments,
                environment: ["DEFAULTS_SYNC_DATABASE_URL": first.url])
        }

        /// What a sign-in service runs for `user`'s token: assigned a node at the first.
        func tokenCommand(user: String, namespace: String) -> String {
            "DEFAULTS_SYNC_DATABASE_URL='\(first.url)' '\(SyncServerProcess.executable)' token --key-file "
                + "'\(key.path)' --user \(user) --namespace \(namespace) --expires-in 1h --assign-node"
        }

        func token(user: String, namespace: String = "com.example.app") throws -> String {
            let result = try ChildProcess.run(
                "/bin/sh", ["-c", tokenCommand(user: user, namespace: namespace)])
            #expect(result.status == 0, "\(result)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func instance() async throws -> SyncServerProcess {
            try await SyncServerProcess(
                database: first.url, keyFile: key.path, options: ["--ping-interval", "1"], environment: environment)
        }

        /// The nodes' rows of `nodes list`, as `name state users capacity`.
        func listed() throws -> [String] {
            let result = try nodes("list")
            #expect(result.status == 0, "\(result)")
            return result.output.split(whereSeparator: \.isNewline).dropFirst().map {
                $0.split(separator: "\t").prefix(4).joined(separator: " ")
            }
        }
    }

    func withDeployment(_ body: (Deployment) async throws -> Void) async throws {
        let first = try #require(PostgresCluster.shared)
        try await PostgresCluster.with { second in
            let folder = try TemporaryDirectory()
            let deployment = Deployment(
                first: first, second: second, key: try await TokenKey(in: folder), folder: folder)
            // A suite's cluster is shared: the directory starts empty for each test.
            _ = try? first.query(
                "TRUNCATE defaults_sync_service_assignments, defaults_sync_service_nodes", database: "defaults_sync")
            #expect(try deployment.nodes("add", "a", "--url", "env:NODE_A_URL", "--capacity", "100").status == 0)
            #expect(try deployment.nodes("add", "b", "--url", "env:NODE_B_URL", "--capacity", "100").status == 0)
            try await body(deployment)
        }
    }

    @Test func usersAreSpreadOverTheNodesAndATokenNamingAnotherNodeIsRefusedAsMoved() async throws {
        try await withDeployment { deployment in
            // The operator's mistakes are refused with what to do.
            let secret = try deployment.nodes(
                "add", "c", "--url", "postgres://defaults:secret@127.0.0.1:1/x", "--capacity", "5")
            #expect(secret.status != 0 && secret.error.contains("no password"), "\(secret)")
            let twice = try deployment.nodes("add", "a", "--url", "env:NODE_A_URL", "--capacity", "5")
            #expect(twice.status != 0 && twice.error.contains("already"), "\(twice)")
            let badName = try deployment.nodes("add", "-x\u{1B}[2J", "--url", "env:X", "--capacity", "5")
            #expect(badName.status != 0, "\(badName)")

            // Ten users' first tokens: each to the node with the most room, five and five.
            var tokens: [String: String] = [:]
            for index in 0..<10 {
                tokens["u\(index)"] = try deployment.token(user: "u\(index)")
            }
            #expect(try deployment.listed() == ["a available 5 100", "b available 5 100"])
            let nodeOf = tokens.mapValues { TokenClaims(unverifiedToken: $0)?.node ?? "" }
            #expect(Set(nodeOf.values) == ["a", "b"])
            // A second token names the same node.
            #expect(TokenClaims(unverifiedToken: try deployment.token(user: "u0"))?.node == nodeOf["u0"])

            let instances = [try await deployment.instance(), try await deployment.instance()]
            // A user on node b writes through one instance; the row is in the second cluster only.
            let onB = try #require(nodeOf.first { $0.value == "b" }?.key)
            let answers = try await RawDevice.exchange(
                instances[0].url, token: tokens[onB]!,
                [
                    DeviceMessage(
                        id: 1, kind: .push,
                        records: [WireRecord(key: "k", value: Data("v".utf8), wall: 1, counter: 0, origin: "m")])
                ])
            #expect(answers.first?.kind == .welcome && answers.first?.node == "b", "\(answers)")
            #expect(answers.last?.kind == .reply, "\(answers)")
            let where_ = "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = '\(onB)'"
            #expect(try deployment.second.query(where_, database: "defaults_sync") == ["1"])
            #expect(try deployment.first.query(where_, database: "defaults_sync") == ["0"])
            // Read back through the other instance.
            let read = try await RawDevice.exchange(
                instances[1].url, token: tokens[onB]!, [DeviceMessage(id: 1, kind: .records, keys: ["k"])])
            #expect(read.last?.records?.first?.value == Data("v".utf8), "\(read)")

            // A token naming the other node, or no node of the directory: moved, ask again.
            let onA = try #require(nodeOf.first { $0.value == "a" }?.key)
            let wrong = try await deployment.key.tokens.sign(
                user: onA, namespace: "com.example.app", lifetime: .seconds(600), node: "b")
            let unknown = try await deployment.key.tokens.sign(
                user: onA, namespace: "com.example.app", lifetime: .seconds(600), node: "nowhere")
            for token in [wrong, unknown] {
                let refused = try await RawDevice.refusal(instances[1].url, token: token)
                #expect(SyncCloseReason(closeReason: refused.reason) == .moved, "\(refused.reason ?? "")")
                #expect(refused.messages.isEmpty)
            }
            // A token naming no node is served from the instances' own database, as before nodes.
            let plain = try await deployment.key.token(user: onA)
            let welcome = try await RawDevice.exchange(instances[0].url, token: plain, [])
            #expect(welcome.first?.kind == .welcome && welcome.first?.node == nil, "\(welcome)")

            // A node with users is removed only by force; a down node's tokens are refused.
            let kept = try deployment.nodes("remove", "a")
            #expect(kept.status != 0 && kept.error.contains("drain it first"), "\(kept)")
            #expect(try deployment.nodes("down", "a").status == 0)
            try await waitUntil("node a's tokens refused") {
                let refused = try await RawDevice.refusal(instances[0].url, token: tokens[onA]!)
                return SyncCloseReason(closeReason: refused.reason) == .moved
            }
            // Its users' next token names node b.
            #expect(TokenClaims(unverifiedToken: try deployment.token(user: onA))?.node == "b")
        }
    }

    @Test func drainingANodeUnderWritesMovesItsUsersWithEveryValueTheirDevicesHold() async throws {
        try await withDeployment { try await drainUnderWrites($0) }
    }

    func drainUnderWrites(_ deployment: Deployment) async throws {
        let instances = [try await deployment.instance(), try await deployment.instance()]
        let namespace = "com.example.nodes"
        // Four users of two devices each, each device on its own instance; tokens from a
        // sign-in command that assigns the user a node at the first.
        let users = (0..<4).map { "user\($0)" }
        var made: [String: [SyncProcess]] = [:]
        for user in users {
            for index in 0..<2 {
                made[user, default: []].append(
                    try await SyncProcess(
                        configDirectory: deployment.folder.machine("\(user)-\(index)"),
                        url: instances[index].url, namespace: namespace,
                        tokenCommand: deployment.tokenCommand(user: user, namespace: namespace)))
            }
        }
        let devices = made
        #expect(try deployment.listed() == ["a available 2 100", "b available 2 100"])
        let onA = try deployment.first.query(
            "SELECT user_id FROM defaults_sync_service_assignments WHERE node = 'a'", database: "defaults_sync")
        #expect(onA.count == 2)
        for user in users { try await devices[user]![0].waitForSync() }
        var asked: [String: Int] = [:]
        for user in users { asked[user] = try await Self.tokensAsked(devices[user]![0]) }

        // The first device of each user writes 3 values a round, 3 rounds a second, while node
        // a is drained; the second device writes once before it.
        for user in users {
            try await devices[user]![1].send("fill \(user)-second 3 v", answer: "ok")
        }
        let writing = Writing()
        let writers = users.map { user in
            Self.write(as: user, with: devices[user]![0], while: writing)
        }
        try await Task.sleep(for: .seconds(2))
        let drained = try deployment.nodes("drain", "a", "--pace-milliseconds", "500")
        #expect(drained.status == 0 && drained.output.contains("2 user(s) moved"), "\(drained)")
        try await Task.sleep(for: .seconds(3))
        writing.end()
        var rounds: [String: Int] = [:]
        for (user, writer) in zip(users, writers) { rounds[user] = try await writer.value }

        // Every user on node b now; node a, empty, removed.
        #expect(try deployment.listed() == ["a draining 0 100", "b available 4 100"])
        #expect(try deployment.nodes("remove", "a").status == 0)

        // Every device holds every value of its user, and so does node b's database.
        for user in users {
            for device in devices[user]! {
                // The prefixes each device must hold 3 values of.
                for prefix in (0..<rounds[user]!).map({ "\(user)-\($0)" }) + ["\(user)-second"] {
                    let what = prefix + " on each device"
                    let command = "count " + prefix + " 3 v"
                    try await waitUntil(what, timeout: .seconds(90)) {
                        try await device.send(command, answer: "count") == "count 3"
                    }
                }
            }
            let expected = 3 * (rounds[user]! + 1)
            let what = "\(user)'s \(expected) values on node b"
            let query = """
                SELECT count(*) FROM defaults_sync_service_values
                WHERE user_id = '\(user)' AND namespace = '\(namespace)'
                """
            let second = deployment.second
            try await waitUntil(what, timeout: .seconds(90)) {
                try second.query(query, database: "defaults_sync") == ["\(expected)"]
            }
        }
        // The moved users' devices asked for new tokens by themselves.
        for user in onA {
            #expect(try await Self.tokensAsked(devices[user]![0]) > asked[user]!, "\(user)")
        }
        // A token naming the removed node is refused as moved.
        let stale = try await deployment.key.tokens.sign(
            user: users[0], namespace: namespace, lifetime: .seconds(600), node: "a")
        let refused = try await RawDevice.refusal(instances[0].url, token: stale)
        #expect(SyncCloseReason(closeReason: refused.reason) == .moved, "\(refused.reason ?? "")")
    }
}

extension NodesTests {
    /// `device` writes 3 values a round, 3 rounds a second, while `writing` is on (and 5 rounds at
    /// least); then waits until they are stored, and returns how many rounds it wrote.
    static func write(as user: String, with device: SyncProcess, while writing: Writing) -> Task<Int, any Error> {
        Task {
            var round = 0
            while writing.isOn || round < 5 {
                try await device.send("fill \(user)-\(round) 3 v", answer: "ok")
                round += 1
                try await Task.sleep(for: .milliseconds(300))
            }
            try await device.send("wait", answer: "ok", timeout: .seconds(60))
            return round
        }
    }

    /// How many times `device`'s token provider was asked.
    static func tokensAsked(_ device: SyncProcess) async throws -> Int {
        Int(try await device.send("tokens", answer: "tokens").dropFirst("tokens ".count)) ?? 0
    }
}

/// Whether the writers go on.
final class Writing: Sendable {
    private let state = Mutex(true)
    var isOn: Bool { state.withLock { $0 } }
    func end() { state.withLock { $0 = false } }
}
