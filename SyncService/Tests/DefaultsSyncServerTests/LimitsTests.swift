import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import TestSupport
import Testing

/// Quotas, the message size and the rate limit refuse clearly, and lose nothing already stored.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct LimitsTests {
    @Test func aKeyOverTheQuotaIsRefusedByNameAndEveryOtherKeyStays() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path,
            options: ["--max-namespace-keys", "5", "--max-namespace-bytes", "4000"])
        let token = try await key.token(user: "quota")
        let machine = try await SyncProcess(
            configDirectory: directory.machine("one"), url: server.url, namespace: "-", token: token)
        try await machine.send("fill k 5 v", answer: "ok")
        try await machine.waitForSync()
        try await machine.set("sixth", "over")
        let status = try await machine.send("wait-at-most 30", answer: "status")
        #expect(status.contains("refused=1"), "\(status)")
        #expect(status.contains("quota"), "\(status)")
        // Bytes: one value that would take the namespace over 4,000 bytes.
        try await machine.send("big k-0 5000", answer: "ok")
        let bigger = try await machine.send("wait-at-most 30", answer: "status")
        #expect(bigger.contains("refused=2") && bigger.contains("bytes"), "\(bigger)")
        // What was stored is still there, for a new machine too.
        let other = try await SyncProcess(
            configDirectory: directory.machine("two"), url: server.url, namespace: "-", token: token)
        try await waitUntil("the five stored keys on a new machine") {
            try await other.send("count k 5 v", answer: "count") == "count 5"
        }
        #expect(try await other.get("sixth") == "(nil)")
        #expect(
            try cluster.query(
                "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = 'quota'", database: "defaults_sync")
                == ["5"])
    }

    @Test func aMessageOverTheLimitClosesTheConnectionAndStoresNothing() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--max-message-bytes", "4096"])
        let token = try await key.token(user: "big")
        let push = DeviceMessage(
            id: 1, kind: .push,
            records: [WireRecord(key: "huge", value: Data(count: 8000), wall: 1, counter: 0, origin: "raw")])
        let closed = try await RawDevice.connect(server.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            var messages = [try await RawDevice.next(&iterator)].compactMap { $0 }
            try await outbound.write(.text(try SyncProtocol.encode(push)))
            // The server closes the connection: nothing more comes.
            while let message = try? await RawDevice.next(&iterator) {
                messages.append(message)
            }
            return messages
        }
        #expect(closed.code == .messageTooLarge, "\(String(describing: closed.code)) \(closed.reason ?? "")")
        #expect(closed.messages.map(\.kind) == [.welcome])
        #expect(
            try cluster.query(
                "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = 'big'", database: "defaults_sync")
                == ["0"])
    }

    @Test func messagesOverTheRateAreRefusedWithWhenToRetryAndTheOthersAnswered() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--rate-limit", "2"])
        let token = try await key.token(user: "fast")
        let started = ContinuousClock.now
        let closed = try await RawDevice.connect(server.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            var messages: [ServerMessage] = []
            for id in 1...20 {
                let push = DeviceMessage(
                    id: id, kind: .push,
                    records: [
                        WireRecord(key: "k\(id)", value: Data("v".utf8), wall: Int64(id), counter: 0, origin: "raw")
                    ])
                try await outbound.write(.text(try SyncProtocol.encode(push)))
            }
            // Until every push is answered (the changes of those stored come too).
            while messages.count(where: { $0.kind == .reply || $0.kind == .failure }) < 20,
                let message = try await RawDevice.next(&iterator)
            {
                messages.append(message)
            }
            try await outbound.close(.normalClosure, reason: nil)
            return messages
        }
        let seconds = Double(started.duration(to: .now).components.seconds) + 1
        let replies = closed.messages.filter { $0.kind == .reply }
        let limited = closed.messages.filter { $0.kind == .failure }
        // A burst of twice the rate, then the rate: however slowly a busy machine answered.
        #expect(Double(replies.count) <= 4 + 2 * seconds, "\(closed.messages.map(\.kind)) in \(seconds) s")
        #expect(
            replies.count + limited.count == 20,
            "\(closed.messages.map(\.kind)), closed: \(String(describing: closed.code)) \(closed.reason ?? "")")
        #expect(limited.allSatisfy { $0.error?.code == .rateLimited && ($0.error?.retryAfterMilliseconds ?? 0) > 0 })
        #expect(Set(limited.compactMap(\.id)).count == limited.count)
        let stored = try cluster.query(
            "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = 'fast'", database: "defaults_sync")
        #expect(stored == ["\(replies.count)"])
    }

    /// A push of more records than a message may carry would hold a database connection and the
    /// owner's lock for as long as its author likes: refused whole, nothing stored.
    @Test func aPushOfMoreRecordsThanAMessageMayCarryIsRefusedWhole() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "many")
        let count = SyncProtocol.maximumRecordsPerMessage + 1
        let push = DeviceMessage(
            id: 1, kind: .push,
            records: (0..<count).map {
                WireRecord(key: "k", value: nil, wall: Int64($0 + 1), counter: 0, origin: "raw")
            })
        let closed = try await RawDevice.connect(server.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            var messages = [try await RawDevice.next(&iterator)].compactMap { $0 }
            try await outbound.write(.text(try SyncProtocol.encode(push)))
            if let answer = try await RawDevice.next(&iterator) { messages.append(answer) }
            try await outbound.close(.normalClosure, reason: nil)
            return messages
        }
        let answer = try #require(closed.messages.last)
        #expect(answer.kind == .failure && answer.error?.code == .malformed, "\(closed.messages)")
        #expect(answer.id == 1)
        #expect(
            try cluster.query(
                "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = 'many'", database: "defaults_sync")
                == ["0"])
    }

    /// Durations too large to convert are refused as bad options, not a trap.
    @Test(arguments: ["--ping-interval", "--idle-timeout", "--slow-consumer-timeout"])
    func aDurationOptionOutOfRangeIsRefused(option: String) throws {
        for value in ["1e300", "nan", "0"] {
            let result = try ChildProcess.run(
                SyncServerProcess.executable,
                [
                    "serve", "--database-url", "postgres://nobody@127.0.0.1:1/none", "--token-key-file", "/nonexistent",
                    option, value,
                ])
            #expect(result.termination == .exited(64), "\(option) \(value): \(result)")
            #expect(result.error.contains(option), "\(result.error)")
        }
    }

    @Test func aConnectionThatSendsNoRequestIsClosed() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--idle-timeout", "1"])
        // A bare TCP connection that never sends a byte, as a client holding sockets open would.
        let socket = try #require(LoopbackSocket(port: server.port))
        #expect(socket.waitForClose(within: .seconds(60)), "the server kept an idle connection open")
    }
}
