import DefaultsSyncProtocol
import Foundation

/// A sync service's `changed` of `count` records, the message a device decodes most, as the
/// server encodes it.
func changedMessageText(records count: Int) -> String {
    let records = (0..<count).map {
        WireRecord(
            key: "p11-\($0)-\($0 * 7)", value: Data("\(1_764_000_000.123 + Double($0))".utf8),
            wall: 1_764_000_000_000 + Int64($0),
            counter: Int64($0 % 3), origin: "device-\($0 % 4)/a8f3", seq: 10_000 + Int64($0))
    }
    return (try? SyncProtocol.encode(ServerMessage(kind: .changed, latest: 10_000 + Int64(count), records: records)))
        ?? ""
}

/// The decoding of a `changed` of 1 and of 10 records: `SyncProtocol.decode` (the protocol's
/// own reader) against `JSONDecoder`, in alternation.
@MainActor func measureMessageDecoding() {
    for count in [1, 10] {
        let text = changedMessageText(records: count)
        let (ours, foundation) = measurePair(
            iterations: 2_000,
            { consume((try? SyncProtocol.decode(ServerMessage.self, from: text))?.latest) },
            { consume((try? JSONDecoder().decode(ServerMessage.self, from: Data(text.utf8)))?.latest) })
        row(
            "— a sync `changed` of \(count) record(s) decoded (\(text.utf8.count) bytes)", format(ours),
            "JSONDecoder: \(format(foundation))", String(format: "%.2f×", ratio(ours, foundation)), nil)
    }
}
