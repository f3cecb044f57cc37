import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import Synchronization
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// A change reaches the user's devices on every instance once and in order, whether its records
/// ride along in the notification or are too large to and are read from the database.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct FanoutTests {
    @Test(.timeLimit(.minutes(2)))
    func changesSmallAndTooLargeForANotificationArriveOnceAndInOrder() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let first = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let second = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "fanout")
        let large = Data(repeating: 0x41, count: 20_000)
        let pushes: [[WireRecord]] = [
            [WireRecord(key: "a", value: Data("1".utf8), wall: 1, counter: 0, origin: "w")],
            [WireRecord(key: "b", value: large, wall: 2, counter: 0, origin: "w")],
            [WireRecord(key: "c", value: Data("3".utf8), wall: 3, counter: 0, origin: "w")],
            (0..<3).map { WireRecord(key: "d\($0)", value: Data("4".utf8), wall: 4, counter: 0, origin: "w") },
            // Over a record already sent: arrives again as a new change.
            [WireRecord(key: "a", value: Data("5".utf8), wall: 5, counter: 0, origin: "w")],
        ]
        let expected = pushes.reduce(0) { $0 + $1.count }
        let welcomed = Flag()
        // The reader, on the second instance.
        async let reading = RawDevice.connect(second.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            var changes: [ServerMessage] = []
            while changes.reduce(0, { $0 + ($1.records?.count ?? 0) }) < expected,
                let message = try await RawDevice.next(&iterator)
            {
                if message.kind == .welcome { welcomed.raise() }
                if message.kind == .changed { changes.append(message) }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return changes
        }
        try await waitUntil("the reader's welcome") { welcomed.isRaised }
        // The writer, on the first instance.
        let written = try await RawDevice.connect(first.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            var replies: [ServerMessage] = []
            _ = try await RawDevice.next(&iterator)
            for (id, records) in pushes.enumerated() {
                try await outbound.write(
                    .text(try SyncProtocol.encode(DeviceMessage(id: id, kind: .push, records: records))))
                // Its answer: a reply, or a failure saying why not.
                while let message = try await RawDevice.next(&iterator) {
                    if message.id == id {
                        replies.append(message)
                        break
                    }
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return replies
        }
        #expect(written.messages.map(\.kind) == Array(repeating: .reply, count: pushes.count), "\(written.messages)")
        let received = try await reading.messages.flatMap { $0.records ?? [] }
        #expect(received.map(\.key) == ["a", "b", "c", "d0", "d1", "d2", "a"])
        #expect(received.first { $0.key == "b" }?.value == large)
        #expect(received.last?.value == Data("5".utf8))
        let numbers = received.compactMap(\.seq)
        #expect(numbers.count == received.count && numbers == numbers.sorted() && Set(numbers).count == numbers.count)
    }

    @Test func anAnnouncementCarriesItsRecordsOnlyWhenTheyFitInANotification() throws {
        let small = [WireRecord(key: "k", value: Data("v".utf8), wall: 1, counter: 2, origin: "o", seq: 8)]
        let announcement = Announcement(tag: "t", after: 7, latest: 8, committed: 99, records: small)
        let read = try #require(Announcement(payload: announcement.payload))
        #expect((read.tag, read.after, read.latest, read.committed) == ("t", 7, 8, 99))
        #expect(read.records == small)

        let large = [
            WireRecord(key: "k", value: Data(count: Announcement.payloadLimit), wall: 1, counter: 0, origin: "o")
        ]
        let header = Announcement(tag: "t", after: 7, latest: 8, committed: 99, records: large).payload
        #expect(header == "t 7 8 99")
        #expect(Announcement(payload: header)?.records == nil)
        #expect(Announcement(payload: "t 7 eight 99") == nil)
        #expect(Announcement(payload: "t 7 8") == nil)

        // Records that do not account for every number from `after` to `latest` stay behind.
        #expect(Announcement(tag: "t", after: 6, latest: 8, committed: 99, records: small).payload == "t 6 8 99")
        var unnumbered = small
        unnumbered[0].seq = nil
        #expect(Announcement(tag: "t", after: 7, latest: 8, committed: 99, records: unnumbered).payload == "t 7 8 99")
    }

    /// The frame an instance forwards as it came is, byte for byte, the one it would encode.
    @Test func aForwardedChangeIsTheMessageItWouldEncode() throws {
        let records = [
            WireRecord(key: "a/b", value: Data([0xFB, 0xFF, 0x00, 0x3E]), wall: 1, counter: 2, origin: "o\"1", seq: 4),
            WireRecord(key: "é\u{0}✓", value: nil, wall: 3, counter: 0, origin: "o", seq: 5),
            WireRecord(key: "k", value: Data(), wall: -1, counter: Int64.max, origin: "", seq: 6),
        ]
        let announcement = try #require(
            Announcement(
                payload: Announcement(tag: "t", after: 3, latest: 6, committed: 99, records: records).payload))
        let frame = try #require(announcement.changedFrame)
        #expect(frame == DeviceOutbox.frame(of: ServerMessage(kind: .changed, latest: 6, records: records)))
        let sent = try SyncProtocol.decode(ServerMessage.self, from: String(buffer: frame))
        #expect(sent.kind == .changed && sent.latest == 6 && sent.records == records)
    }
}

/// What an instance does with an announcement for devices at each position: the database is
/// read only when the records did not ride along or the devices missed some before them.
@Suite struct AnnouncementDeliveryTests {
    static let records = (4...6).map {
        WireRecord(key: "k\($0)", value: Data("v".utf8), wall: $0, counter: 0, origin: "o", seq: Int64($0))
    }
    static let announcement = Announcement(
        payload: Announcement(tag: "t", after: 3, latest: 6, committed: 99, records: records).payload)!

    @Test func devicesThatSawEverythingBeforeThePushGetItsFrameAsItCame() throws {
        let frame = try #require(Self.announcement.changedFrame)
        #expect(Self.announcement.delivery(toDevicesAt: 3, fetching: false) == .forward(frame))
    }

    @Test func devicesThatSawPartOfThePushGetTheRestOnly() {
        #expect(Self.announcement.delivery(toDevicesAt: 4, fetching: false) == .send(Array(Self.records.dropFirst())))
        #expect(Self.announcement.delivery(toDevicesAt: 6, fetching: false) == .alreadySent)
        #expect(Self.announcement.delivery(toDevicesAt: 9, fetching: false) == .alreadySent)
    }

    @Test func devicesThatMissedNumbersOrAreBeingFetchedForReadTheDatabase() {
        #expect(Self.announcement.delivery(toDevicesAt: 2, fetching: false) == .fetch)
        #expect(Self.announcement.delivery(toDevicesAt: 3, fetching: true) == .fetch)
        let withoutRecords = Announcement(payload: "t 3 6 99")!
        #expect(withoutRecords.delivery(toDevicesAt: 3, fetching: false) == .fetch)
        #expect(withoutRecords.delivery(toDevicesAt: 6, fetching: false) == .alreadySent)
    }
}

/// A flag one task raises and another waits for.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isRaised: Bool { raised.load(ordering: .relaxed) }
    func raise() { raised.store(true, ordering: .relaxed) }
}
