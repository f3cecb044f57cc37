import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import TestSupport
import Testing

/// A device that asks and never reads costs the server a bounded amount of memory and is closed
/// as a slow consumer, while the other devices on the instance go on being answered.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct SlowConsumerTests {
    /// The value the slow device asks for again and again.
    static let valueBytes = 700_000

    @Test(.timeLimit(.minutes(3)))
    func aDeviceAskingForBigValuesWithoutReadingIsClosedAndCostsABoundedAmount() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path,
            options: ["--slow-consumer-timeout", "3", "--rate-limit", "1000"])
        let slowToken = try await key.token(user: "slow-consumer")
        let ordinaryToken = try await key.token(user: "slow-consumer-neighbour")
        let big = Data((0..<Self.valueBytes).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 >> 8) })
        _ = try await Self.ask(
            server.url, token: slowToken,
            [
                DeviceMessage(
                    id: 1, kind: .push, records: [WireRecord(key: "big", value: big, wall: 1, counter: 0, origin: "t")])
            ])
        _ = try await Self.ask(
            server.url, token: ordinaryToken,
            [
                DeviceMessage(
                    id: 1, kind: .push,
                    records: [WireRecord(key: "small", value: Data("v".utf8), wall: 1, counter: 0, origin: "t")])
            ])
        // The path a reply of the big value takes is warmed before the baseline.
        let warm = try await Self.ask(
            server.url, token: slowToken, [DeviceMessage(id: 2, kind: .records, keys: ["big"])])
        #expect(warm.first?.records?.first?.value == big)
        let baseline = try #require(Self.residentBytes(of: server.child.id))

        // 200 requests for the value (on the old server, 200 replies of about 1 MB queued), and
        // not one byte read.
        let slow = try #require(LoopbackSocket(port: server.port))
        slow.send(Self.upgradeRequest(token: slowToken))
        for id in 1...200 {
            slow.send(
                Self.maskedTextFrame(try SyncProtocol.encode(DeviceMessage(id: id, kind: .records, keys: ["big"]))))
        }
        // Meanwhile another user's device on the instance is answered.
        let answers = try await Self.ask(
            server.url, token: ordinaryToken, (1...5).map { DeviceMessage(id: $0, kind: .records, keys: ["small"]) })
        #expect(answers.count == 5 && answers.allSatisfy { $0.kind == .reply }, "\(answers)")

        var peak = baseline
        try await waitUntil("the slow device closed as a slow consumer", timeout: .seconds(60)) {
            peak = max(peak, Self.residentBytes(of: server.child.id) ?? 0)
            return server.log.contains("slow consumer") && server.log.contains(#"user "slow-consumer""#)
        }
        let growth = peak - baseline
        // The documented bound for one device is the outbox (512 KB), one reply (about 1 MB) and
        // 128 KB in NIO; the rest is room for the allocator, far under the 190 MB that 200 queued
        // replies take.
        #expect(growth < 24 << 20, "the server grew by \(growth >> 20) MB for one device that never reads")
        let line = server.log.split(separator: "\n").first { $0.contains("slow consumer") } ?? ""
        #expect(line.contains("notice") && line.contains("127.0.0.1"), "\(line)")
        #expect(slow.drainUntilClosed(within: .seconds(30)), "the slow device's connection stayed open")
    }

    /// Connects with `token`, sends `requests` one at a time and returns their answers.
    static func ask(_ url: String, token: String, _ requests: [DeviceMessage]) async throws -> [ServerMessage] {
        try await RawDevice.connect(url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            _ = try await RawDevice.next(&iterator)
            var answers: [ServerMessage] = []
            for request in requests {
                try await outbound.write(.text(try SyncProtocol.encode(request)))
                while let message = try await RawDevice.next(&iterator) {
                    if message.id == request.id {
                        answers.append(message)
                        break
                    }
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return answers
        }.messages
    }

    /// The resident memory of a process, from `/proc/<pid>/status` (`VmRSS`).
    static func residentBytes(of process: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }

    /// A WebSocket upgrade request for the sync path, by hand.
    static func upgradeRequest(token: String) -> [UInt8] {
        Array(
            ("GET \(SyncProtocol.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n").utf8)
    }

    /// One final text frame of `text`, masked as a client's must be.
    static func maskedTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff)]
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }
}
