import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import Synchronization
import TestSupport
import Testing

/// Quotas count everything stored (names, removals, origins, values), removals expire, a user's
/// namespaces, connections and rate are capped across their connections, a namespace's stamps
/// come in pages, a record PostgreSQL refuses is refused alone, and one user's numbers say
/// nothing of another's writes.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct QuotaTests {
    @Test(.timeLimit(.minutes(2)))
    func removalsLongNamesAndOriginsCountAndRemovalsExpire() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path,
            options: [
                "--max-namespace-keys", "5", "--max-namespace-bytes", "1000", "--max-key-bytes", "300",
                "--tombstone-days", "30",
            ])
        // Removals count as keys: 5 of 8 are stored.
        let removals = (0..<8).map { removal("gone-\($0)", wall: 1) }
        let removed = try await push(removals, to: server, as: try await key.token(user: "remover"))
        #expect(removed.count == 3 && removed.values.allSatisfy { $0.contains("quota") }, "\(removed)")
        #expect(try rows("remover", cluster) == ["5 5"])

        // Names count as bytes: three removals of 250-byte names fit in 1,000 bytes, a fourth not;
        // a name over 300 bytes is refused by name whatever the quota.
        let long = (0..<4).map { removal(String(repeating: Character("\($0)"), count: 250), wall: 1) }
        let longer = removal(String(repeating: "x", count: 301), wall: 1)
        let named = try await push(long + [longer], to: server, as: try await key.token(user: "namer"))
        #expect(named.count == 2, "\(named)")
        #expect(named[longer.key]?.contains("301 bytes") == true, "\(named)")
        #expect(named.values.contains { $0.contains("quota") && $0.contains("bytes") }, "\(named)")

        // Origins count, and one over the limit is refused by name.
        let origin = String(repeating: "o", count: 129)
        let signed = try await push(
            [WireRecord(key: "k", value: Data("v".utf8), wall: 1, counter: 0, origin: origin)], to: server,
            as: try await key.token(user: "origins"))
        #expect(signed["k"]?.contains("origin") == true, "\(signed)")

        // Removals older than --tombstone-days are forgotten at the owner's next push: room again.
        try cluster.query(
            """
            SET session_replication_role = replica;
            UPDATE defaults_sync_service_values SET updated_at = now() - interval '31 days' WHERE user_id = 'remover'
            """, database: "defaults_sync")
        let later = (0..<5).map { removal("later-\($0)", wall: 2) }
        let afterExpiry = try await push(later, to: server, as: try await key.token(user: "remover"))
        #expect(afterExpiry.isEmpty, "\(afterExpiry)")
        #expect(
            try cluster.query(
                "SELECT key FROM defaults_sync_service_values WHERE user_id = 'remover' ORDER BY key",
                database: "defaults_sync") == later.map(\.key))
    }

    @Test(.timeLimit(.minutes(2)))
    func aUsersNamespacesConnectionsAndRateAreCapped() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path,
            options: ["--max-user-namespaces", "2", "--max-user-connections", "3", "--rate-limit", "2"])
        // Namespaces: the third is refused, the first two still take changes.
        for (index, namespace) in ["one", "two", "three", "one"].enumerated() {
            let token = try await key.token(user: "spread", namespace: namespace)
            let refused = try await push([record("k\(index)", wall: 1)], to: server, as: token)
            #expect(refused.isEmpty == (namespace != "three"), "\(namespace): \(refused)")
            if namespace == "three" { #expect(refused["k2"]?.contains("namespaces") == true, "\(refused)") }
        }

        // Connections: three held, a fourth is closed saying why.
        let token = try await key.token(user: "crowd")
        let release = Flag()
        let held = Tally()
        let holders = (0..<3).map { _ in
            Task {
                try await RawDevice.connect(server.url, token: token) { inbound, outbound in
                    var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    let welcome = try await RawDevice.next(&iterator)
                    held.increment()
                    try await waitUntil("the test's end") { release.isRaised }
                    try await outbound.close(.normalClosure, reason: nil)
                    return [welcome].compactMap { $0 }
                }
            }
        }
        try await waitUntil("three connections") { held.value == 3 }
        let fourth = try await RawDevice.refusal(server.url, token: token)
        #expect(SyncCloseReason(closeReason: fourth.reason) == .tooManyConnections, "\(fourth.reason ?? "")")
        #expect(fourth.messages.isEmpty)
        release.raise()
        for holder in holders {
            #expect(try await holder.value.messages.map(\.kind) == [.welcome])
        }

        // The rate: three connections of one user share one bucket of 2 a second (bursts of 4).
        let clock = ContinuousClock()
        let start = clock.now
        let rated = try await key.token(user: "rated")
        let answered = try await withThrowingTaskGroup(of: [ServerMessage].self) { group in
            for connection in 0..<3 {
                group.addTask {
                    try await RawDevice.exchange(
                        server.url, token: rated,
                        (1...10).map { DeviceMessage(id: connection * 100 + $0, kind: .changes, after: 0) })
                }
            }
            return try await group.reduce(into: [ServerMessage]()) { $0 += $1 }
        }
        let seconds = Double(start.duration(to: clock.now).components.seconds) + 1
        let replies = answered.filter { $0.kind == .reply }.count
        #expect(answered.filter { $0.kind != .welcome }.count == 30)
        #expect(Double(replies) <= 4 + 2 * seconds, "\(replies) answered in about \(seconds) s")
    }

    @Test func stampsComeInPagesToDevicesThatAskForThem() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "paged")
        let names = (0..<25).map { String(format: "key-%02d", $0) } + ["Z", "é", "a b"]
        #expect(try await push(names.map { record($0, wall: 1) }, to: server, as: token).isEmpty)
        var pages: [ServerMessage] = []
        var after: String?
        repeat {
            let page = try await RawDevice.exchange(
                server.url, token: token, [DeviceMessage(id: 1, kind: .stamps, afterKey: after, limit: 10)])
            pages.append(try #require(page.last))
            after = page.last?.stamps?.last?.key
        } while pages.last?.more == true && pages.count < 10
        #expect(pages.map { $0.stamps?.count ?? 0 } == [10, 10, 8])
        #expect(pages.map(\.more) == [true, true, false])
        let paged = pages.flatMap { $0.stamps ?? [] }.map(\.key)
        #expect(paged == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        // A device older than paging gets every stamp at once.
        let whole = try await RawDevice.exchange(server.url, token: token, [DeviceMessage(id: 1, kind: .stamps)])
        #expect(whole.last?.stamps?.count == names.count)
        #expect(whole.last?.more == nil)
    }

    @Test func aRecordPostgresRefusesIsRefusedByNameAndTheRestStored() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--max-key-bytes", "3000"])
        // Random letters do not compress: the index's row holds all of namespace and key, over the
        // 2,704 bytes of a B-tree's row.
        func random(_ count: Int) -> String {
            String(
                (0..<count).map { _ in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement()!
                })
        }
        let token = try await key.token(user: "indexed", namespace: "ns-" + random(250))
        let tooLongForTheIndex = random(2_600)
        let overTheLimit = random(3_001)
        let records = [
            record("first", wall: 1), record(tooLongForTheIndex, wall: 1), record(overTheLimit, wall: 1),
            record("last", wall: 1),
        ]
        let refused = try await push(records, to: server, as: token)
        #expect(Set(refused.keys) == [tooLongForTheIndex, overTheLimit], "\(refused)")
        #expect(refused[tooLongForTheIndex]?.contains("database refused") == true, "\(refused)")
        #expect(refused[overTheLimit]?.contains("3001 bytes") == true, "\(refused)")
        #expect(
            try cluster.query(
                "SELECT key FROM defaults_sync_service_values WHERE user_id = 'indexed' ORDER BY key",
                database: "defaults_sync") == ["first", "last"])
    }

    /// A push is stored by one statement however many records it carries: a key it carries three
    /// times is stored once, at its latest version, a removal among them too, and the owner's
    /// numbers run on without a gap, in the order a device catches up with.
    @Test func aLargePushWithAKeyRepeatedStoresItsLatestVersionOnceAndNumbersWithoutGaps() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "batched")
        let names = (0..<300).map { "key-\($0)" }
        var records = names.map { record($0, wall: 10) }
        records += [
            WireRecord(key: "repeated", value: Data("older".utf8), wall: 5, counter: 0, origin: "o"),
            WireRecord(key: "repeated", value: Data("latest".utf8), wall: 7, counter: 0, origin: "o"),
            WireRecord(key: "repeated", value: Data("middle".utf8), wall: 6, counter: 0, origin: "o"),
            record("removed", wall: 3), removal("removed", wall: 4),
        ]
        #expect(try await push(records.shuffled(), to: server, as: token) == [:])
        #expect(
            try cluster.query(
                """
                SELECT convert_from(value, 'UTF8') FROM defaults_sync_service_values
                WHERE user_id = 'batched' AND key = 'repeated'
                """, database: "defaults_sync") == ["latest"])
        #expect(try rows("batched", cluster) == ["302 1"])
        // An older version of the repeated key, pushed again, changes nothing and takes no number.
        #expect(try await push([record("repeated", wall: 6)], to: server, as: token) == [:])
        let changes = try await RawDevice.exchange(
            server.url, token: token, [DeviceMessage(id: 1, kind: .changes, after: 0)])
        let caughtUp = changes.flatMap { $0.records ?? [] }
        #expect(caughtUp.compactMap(\.seq) == Array(1...302).map(Int64.init), "\(caughtUp.compactMap(\.seq))")
        #expect(Set(caughtUp.map(\.key)) == Set(names + ["repeated", "removed"]))
        #expect(caughtUp.first { $0.key == "removed" }?.value == nil)
    }

    /// A record stamped days ahead of the server's clock would win every later change of its key
    /// on every device: refused by name, the others stored.
    @Test func aRecordStampedDaysAheadIsRefusedByName() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "ahead")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let records = [
            record("on-time", wall: now), record("days-ahead", wall: now + 3 * 86_400_000),
            record("last-version", wall: .max),
        ]
        let refused = try await push(records, to: server, as: token)
        #expect(Set(refused.keys) == ["days-ahead", "last-version"], "\(refused)")
        #expect(refused["days-ahead"]?.contains("hours ahead") == true, "\(refused)")
        #expect(
            try cluster.query(
                "SELECT key FROM defaults_sync_service_values WHERE user_id = 'ahead' ORDER BY key",
                database: "defaults_sync") == ["on-time"])
    }

    @Test func oneUsersNumbersDoNotCountAnothersWrites() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let watcher = try await key.token(user: "counting")
        #expect(try await push([record("mine", wall: 1)], to: server, as: watcher).isEmpty)
        let busy = try await key.token(user: "busy")
        for batch in 0..<5 {
            let records = (0..<10).map { record("b\(batch)-\($0)", wall: 1) }
            #expect(try await push(records, to: server, as: busy).isEmpty)
        }
        #expect(try await push([record("mine", wall: 2)], to: server, as: watcher).isEmpty)
        let changes = try await RawDevice.exchange(
            server.url, token: watcher, [DeviceMessage(id: 1, kind: .changes, after: 0)])
        // Its own numbers run on from its own: 1, then 2; nothing of the 50 writes between.
        #expect(changes.last?.records?.map(\.seq) == [2], "\(changes)")
        #expect(changes.last?.latest == 2)
    }

    private func record(_ key: String, wall: Int64) -> WireRecord {
        WireRecord(key: key, value: Data("v".utf8), wall: wall, counter: 0, origin: "o")
    }

    private func removal(_ key: String, wall: Int64) -> WireRecord {
        WireRecord(key: key, value: nil, wall: wall, counter: 0, origin: "o")
    }

    /// Pushes `records` as one message and returns what the reply refused.
    private func push(_ records: [WireRecord], to server: SyncServerProcess, as token: String) async throws
        -> [String: String]
    {
        let replies = try await RawDevice.exchange(
            server.url, token: token, [DeviceMessage(id: 1, kind: .push, records: records)])
        let reply = try #require(replies.last, "no reply")
        #expect(reply.kind == .reply, "\(reply)")
        return reply.refused ?? [:]
    }

    /// The owner's rows and removals, as `<rows> <removals>`.
    private func rows(_ user: String, _ cluster: PostgresCluster) throws -> [String] {
        try cluster.query(
            """
            SELECT count(*) || ' ' || count(*) FILTER (WHERE value IS NULL) FROM defaults_sync_service_values
            WHERE user_id = '\(user)'
            """, database: "defaults_sync")
    }
}

extension RawDevice {
    /// How the server closes a connection it refuses, with the messages before.
    static func refusal(_ url: String, token: String) async throws -> Closed {
        try await connect(url, token: token, deadline: .seconds(30)) { inbound, _ in
            try await messages(inbound)
        }
    }

    /// Connects, reads the welcome, sends each message and waits for its answer (a reply or a
    /// failure with its `id`), then closes: returns the welcome and the answers, in order.
    static func exchange(_ url: String, token: String, _ messages: [DeviceMessage]) async throws -> [ServerMessage] {
        let closed = try await connect(url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            var answers = [try await next(&iterator)].compactMap { $0 }
            for message in messages {
                try await outbound.write(.text(try SyncProtocol.encode(message)))
                while let answer = try await next(&iterator) {
                    if answer.id == message.id, answer.kind == .reply || answer.kind == .failure {
                        answers.append(answer)
                        break
                    }
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return answers
        }
        return closed.messages
    }
}

/// A count several tasks raise.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}
