import DefaultsSyncProtocol
import Foundation
import Synchronization

/// P19's greedy user: raw WebSockets of one user and namespace on one instance, each asking
/// without pause, from a thread of its own: a push of 1,000 records (the same 1,000 keys, each time
/// a later version, so every push rewrites them all under the owner's lock), then an expensive
/// read (the 1,000 keys' records, the changes from the first, every stamp at once), and again.
/// Each request goes as soon as the last is answered; it waits only what a failure names
/// (`retryAfterMilliseconds`: a rate limit), else it would measure the refusals' CPU rather than
/// the database's share. The changes its other connections are sent are read and dropped. A
/// closed connection connects again 0.1 s later, whatever its close frame asked.
final class GreedyDevices: Sendable {
    private let port: Int
    private let token: String
    private let running = Atomic<Bool>(true)
    private let finished = Atomic<Int>(0)
    private let version = Atomic<Int>(0)
    private let threads: Int
    /// What happened, by kind: answered pushes and reads, failures by code, closes by reason.
    private let events = Mutex<[String: Int]>([:])

    /// Every key's name, in a `records` request's `keys`.
    private static let keys = (0..<SyncProtocol.maximumRecordsPerMessage).map { "\"g-\($0)\"" }

    /// Connects `connections` devices of the user of `token` to the loopback `port`.
    init(port: Int, token: String, connections: Int) {
        self.port = port
        self.token = token
        threads = connections
        for _ in 0..<connections {
            Thread { [self] in
                device()
                finished.add(1, ordering: .relaxed)
            }.start()
        }
    }

    /// Stops them all, and returns what happened (`push 1234, read 1200, ...`), most frequent first.
    func stop() -> String {
        running.store(false, ordering: .relaxed)
        while finished.load(ordering: .relaxed) < threads { usleep(10_000) }
        return events.withLock { $0 }.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
            .joined(separator: ", ")
    }

    private var isRunning: Bool { running.load(ordering: .relaxed) }

    private func count(_ event: String) {
        events.withLock { $0[event, default: 0] += 1 }
    }

    private func device() {
        while isRunning {
            guard let socket = RawWebSocket.connected(to: port) else {
                count("not connected")
                usleep(100_000)
                continue
            }
            RawWebSocket.send(RawWebSocket.upgradeRequest(token: token), to: socket)
            let reader = RawWebSocket.Reader(socket: socket) { [self] in isRunning }
            if reader.upgraded() {
                converse(reader)
            } else if isRunning {
                count("upgrade refused")
            }
            close(socket)
            if isRunning { usleep(100_000) }
        }
    }

    /// Requests and their answers, one at a time, until the connection ends.
    private func converse(_ reader: RawWebSocket.Reader) {
        var id = 0
        while isRunning {
            id += 1
            let (kind, request) = id % 2 == 1 ? ("push", push(id: id)) : read(id: id)
            RawWebSocket.send(RawWebSocket.maskedTextFrame(request), to: reader.socket)
            while true {
                guard let message = reader.next() else { return }
                guard case .text(let head) = message else {
                    if case .closed(let reason) = message, isRunning {
                        count("closed: " + (SyncCloseReason(closeReason: reason)?.rawValue ?? reason))
                    }
                    return
                }
                if head.contains(#""kind":"reply""#) {
                    count(kind)
                    break
                }
                if head.contains(#""kind":"failure""#) {
                    count("failure " + (Self.field("code", in: head) ?? "?"))
                    if let wait = Self.field("retryAfterMilliseconds", in: head).flatMap({ Int($0) }) {
                        usleep(useconds_t(min(wait, 10_000) * 1000))
                    }
                    break
                }
            }
        }
    }

    /// A push of every key, each a version later than any pushed before.
    private func push(id: Int) -> String {
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        let counter = version.add(1, ordering: .relaxed).newValue
        let records = (0..<SyncProtocol.maximumRecordsPerMessage).map {
            #"{"key":"g-\#($0)","value":"AAECAwQFBgcICQoLDA0ODw==","wall":\#(wall),"counter":\#(counter),"#
                + #""origin":"greedy"}"#
        }
        return #"{"id":\#(id),"kind":"push","records":[\#(records.joined(separator: ","))]}"#
    }

    /// The next expensive read, in turn: the records of every key, the changes from the first,
    /// every stamp at once (no page).
    private func read(id: Int) -> (String, String) {
        switch id / 2 % 3 {
        case 0: ("records", #"{"id":\#(id),"kind":"records","keys":[\#(Self.keys.joined(separator: ","))]}"#)
        case 1: ("changes", #"{"id":\#(id),"kind":"changes","after":0}"#)
        default: ("stamps", #"{"id":\#(id),"kind":"stamps"}"#)
        }
    }

    /// A number's or a string's text after `"name":` in `json`.
    private static func field(_ name: String, in json: String) -> String? {
        guard let range = json.range(of: "\"\(name)\":") else { return nil }
        let rest = json[range.upperBound...].drop { $0 == "\"" }
        return String(rest.prefix { $0 != "\"" && $0 != "," && $0 != "}" })
    }
}
