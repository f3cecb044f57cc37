import DefaultsSyncProtocol
import Foundation
import NIOCore

/// What a committed push tells every instance, as the sealed text (``AnnouncementSeal``) of one
/// notification on ``ServiceSchema/channel``: `<owner tag> <after> <latest> <commit ms>[ <records>]`.
///
/// `after` is the owner's last number before the push and `latest` its last after it; the pushed
/// records took every number in between, one each (pushes hold the owner's lock). They ride
/// along as JSON when they fit in a notification and account for those numbers (checked as it is
/// made), so that an instance whose devices have seen `after` forwards them as they came
/// (``changedFrame``), without reading the database or decoding them; otherwise it fetches them.
struct Announcement {
    /// The most a sealed notification carries (PostgreSQL refuses a payload of 8,000 bytes or more).
    static let payloadLimit = AnnouncementSeal.textLimit

    var tag: String
    var after: Int64
    var latest: Int64
    var committed: Int64
    /// The records' JSON, still to be decoded (an instance decodes only what it forwards).
    private var recordsText: Substring?

    init(tag: String, after: Int64, latest: Int64, committed: Int64, records: [WireRecord]) {
        self.tag = tag
        self.after = after
        self.latest = latest
        self.committed = committed
        // Their names and values alone over the limit: not encoded only to be left out.
        let least = records.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
        guard least <= Self.payloadLimit, accounts(for: records) else { return }
        recordsText = (try? SyncProtocol.encode(records)).map { Substring($0) }
    }

    init?(payload: String) {
        let parts = payload.split(separator: " ", maxSplits: 4)
        guard parts.count >= 4, let after = Int64(parts[1]), let latest = Int64(parts[2]),
            let committed = Int64(parts[3])
        else { return nil }
        (tag, self.after, self.latest, self.committed) = (String(parts[0]), after, latest, committed)
        recordsText = parts.count == 5 ? parts[4] : nil
    }

    /// The notification's payload: with the records when they fit, else without.
    var payload: String {
        let header = "\(tag) \(after) \(latest) \(committed)"
        guard let recordsText, header.utf8.count + 1 + recordsText.utf8.count <= Self.payloadLimit else {
            return header
        }
        return header + " " + recordsText
    }

    /// The pushed records, when they rode along.
    var records: [WireRecord]? {
        recordsText.flatMap { try? SyncProtocol.decode([WireRecord].self, from: String($0)) }
    }

    /// The `changed` message of the pushed records, when they rode along, for devices that have
    /// seen `after`: their JSON spliced in as it came, the bytes `DeviceOutbox.frame(of:)` makes of
    /// `ServerMessage(kind: .changed, latest: latest, records: records)` (FanoutTests hold them
    /// equal), so that a fan-out neither decodes nor encodes them.
    var changedFrame: ByteBuffer? {
        recordsText.map { ByteBuffer(string: #"{"kind":"changed","latest":\#(latest),"records":\#($0)}"#) }
    }

    /// How the devices of one owner on an instance, sent everything up to `position`, get the
    /// pushed records: the one decision of a fan-out, made without the database when it can be.
    func delivery(toDevicesAt position: Int64, fetching: Bool) -> Delivery {
        guard latest > position else { return .alreadySent }
        // A fetch under way, or numbers missed before `after`: only the database has them in order.
        guard !fetching, position >= after else { return .fetch }
        if position == after, let frame = changedFrame { return .forward(frame) }
        guard let records, accounts(for: records) else { return .fetch }
        return .send(records.filter { ($0.seq ?? 0) > position })
    }

    /// What ``delivery(toDevicesAt:fetching:)`` decides.
    enum Delivery: Equatable {
        /// The devices were sent `latest` already.
        case alreadySent
        /// ``changedFrame``, as it came: the devices have seen `after`.
        case forward(ByteBuffer)
        /// The records they have not seen (some before, up to `after`, they have).
        case send([WireRecord])
        /// Read from the database: the records did not ride along, or the devices missed some before them.
        case fetch
    }

    /// Whether `records` are what the announcement says was numbered: one each for every number
    /// after `after` up to `latest`, in order. Only then may a group's position move to `latest`
    /// without reading the database.
    func accounts(for records: [WireRecord]) -> Bool {
        guard latest > after, latest - after == Int64(records.count) else { return false }
        return records.enumerated().allSatisfy { $0.element.seq == after + 1 + Int64($0.offset) }
    }
}
