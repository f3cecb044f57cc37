import DefaultsSyncProtocol
import Foundation
import Synchronization

/// P16: the sync service losing its database's primary. A 3-node Patroni cluster
/// (`Tests/patroni-cluster.sh`), two instances given every node's address with
/// `target_session_attrs=read-write`, and ``FailoverDevice``s writing and receiving throughout; the
/// primary is killed, and the line tells how long until a write pushed after the kill reached
/// another device, and whether any acknowledged write was lost.
enum P16Failover {
    static let script = Cluster.script.deletingLastPathComponent().appendingPathComponent("patroni-cluster.sh")
    static let users = 3
    static let devicesPerUser = 2
    /// The time between two pushes of one device.
    static let writePeriod = 0.3
    /// Patroni's `ttl` in the script's configuration: a dead primary's leader key lasts that long.
    static let patroniTTL = 10.0
    /// The goal: a delivered write again within Patroni's `ttl` and 5 s.
    static let goalSeconds = patroniTTL + 5

    /// Runs P16 and prints its line, or why it did not run.
    static func run(namespace: String) {
        guard (try? Cluster.run(["available"], script: script)) != nil else {
            print(
                "P16 skipped: Tests/patroni-cluster.sh says the cluster cannot run here (it needs Debian's "
                    + "patroni, etcd-server, haproxy and postgresql)")
            fflush(nil)
            return
        }
        var directory: String?
        // Every process goes, whatever failed: the cluster's are not this process's children.
        defer { directory.map { _ = try? Cluster.run(["destroy", $0], script: script) } }
        do {
            let (started, ports) = try startCluster()
            directory = started
            try measure(cluster: started, postgresPorts: ports, namespace: namespace + "-p16")
        } catch {
            print("P16 failed: \(error)")
        }
        fflush(nil)
    }

    /// A cluster on a free block of 9 ports (the script refuses one in use): its directory and
    /// the nodes' PostgreSQL ports.
    private static func startCluster() throws -> (directory: String, postgresPorts: [Int]) {
        var lastError: (any Error)?
        for _ in 0..<3 {
            do {
                let output = try Cluster.run(["start", "\(Int.random(in: 20_000..<60_000))"], script: script)
                let directory = String(output.split(whereSeparator: \.isNewline).last ?? "")
                let ports = try String(contentsOfFile: directory + "/ports", encoding: .utf8)
                    .split(whereSeparator: \.isNewline).first { $0.hasPrefix("postgres=") }?
                    .dropFirst("postgres=".count).split(separator: ",").compactMap { Int($0) }
                guard let ports, ports.count == 3 else {
                    _ = try? Cluster.run(["destroy", directory], script: script)
                    throw Cluster.Failure(description: "no PostgreSQL ports in \(directory)/ports")
                }
                return (directory, ports)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? Cluster.Failure(description: "could not start a Patroni cluster")
    }

    private static func measure(cluster: String, postgresPorts: [Int], namespace: String) throws {
        let hosts = postgresPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",")
        let database =
            "postgres://defaults:defaults-test-password@\(hosts)/defaults_sync?sslmode=disable"
            + "&target_session_attrs=read-write"
        // Room for every value written while the failover takes.
        let service = try Service(database: database, instances: 2, options: ["--max-namespace-keys", "100000"])
        defer { service.stop() }
        let userNames = (0..<users).map { "p16-user-\($0)" }
        let tokens = try service.tokens(for: userNames, namespace: namespace)
        // A user's two devices on different instances: each delivery crosses the change listener.
        let devices = (0..<users).flatMap { user in
            (0..<devicesPerUser).map { slot in
                FailoverDevice(
                    user: userNames[user], slot: slot, port: service.instances[slot % 2].port, token: tokens[user])
            }
        }
        defer {
            for device in devices { device.stop() }
        }
        try waitUntil("every device connected", seconds: 30) { devices.allSatisfy(\.hasConnected) }
        for (index, device) in devices.enumerated() {
            device.startWriting(after: writePeriod * Double(index) / Double(devices.count))
        }
        sleep(5)
        let killed = try Cluster.run(["kill-primary", cluster], script: script)
        let killedAt = Date().timeIntervalSince1970
        // The script's view of the failover: a live primary and sync standby, every live node healthy.
        let promoted = try Cluster.run(["wait-primary", cluster, "120"], script: script)
        let promotedAt = Date().timeIntervalSince1970
        /// What the user's other device received of `device`'s writes: when each arrived, by write.
        func deliveries(of device: FailoverDevice) -> [Int: Double] {
            let partner = devices.first { $0.user == device.user && $0.slot != device.slot }
            let received = partner?.receivedTimes ?? [:]
            return device.writes.keys.reduce(into: [:]) { times, write in
                times[write] = received[FailoverDevice.key(slot: device.slot, write: write)]
            }
        }
        /// The earliest delivery, to its user's other device, of a write pushed after the kill.
        func firstDelivery() -> Double? {
            devices.compactMap { device in
                let delivered = deliveries(of: device)
                return device.writes.filter { $0.value.sent >= killedAt }.compactMap { delivered[$0.key] }.min()
            }.min()
        }
        // Up to 2 minutes for the service to deliver again (the script's wait is over by then,
        // at about the ttl and 5 s), then 10 s more of writes through it.
        let deadline = killedAt + 120
        while firstDelivery() == nil, Date().timeIntervalSince1970 < deadline { usleep(100_000) }
        sleep(10)
        for device in devices { device.stopWriting() }
        // A push may wait 30 s for the database (the server's transaction limit).
        try? waitUntil("every push answered", seconds: 45) { devices.allSatisfy(\.isAnswered) }
        try? waitUntil("every acknowledged write delivered", seconds: 30) {
            devices.allSatisfy { device in
                let delivered = deliveries(of: device)
                return device.writes.allSatisfy { $0.value.acknowledged == nil || delivered[$0.key] != nil }
            }
        }
        let delivered = firstDelivery()
        for device in devices { device.stop() }
        let stored = Set(
            try Cluster.run(
                [
                    "query", cluster,
                    "SELECT user_id || ' ' || key FROM defaults_sync_service_values WHERE namespace = '\(namespace)'",
                    "defaults_sync",
                ], script: script
            ).split(whereSeparator: \.isNewline).map(String.init))

        var acknowledged = 0
        var lostFromDatabase = 0
        var lostFromDevice = 0
        var firstAcknowledged: Double?
        var failures: [String: Int] = [:]
        for device in devices {
            let delivered = deliveries(of: device)
            for (write, record) in device.writes {
                if let failure = record.failure { failures[failure, default: 0] += 1 }
                guard let at = record.acknowledged else { continue }
                acknowledged += 1
                if !stored.contains("\(device.user) \(FailoverDevice.key(slot: device.slot, write: write))") {
                    lostFromDatabase += 1
                }
                if delivered[write] == nil { lostFromDevice += 1 }
                if record.sent >= killedAt { firstAcknowledged = min(firstAcknowledged ?? at, at) }
            }
        }
        let closes = devices.flatMap(\.closeReasons)
        let unacknowledged = failures.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
        /// Seconds from the kill to `time`, or "never".
        func since(_ time: Double?) -> String {
            time.map { String(format: "%.1f s", $0 - killedAt) } ?? "never"
        }
        let met =
            delivered.map { $0 - killedAt <= goalSeconds } == true && lostFromDatabase == 0 && lostFromDevice == 0
        print(
            "P16 failover: \(users) users x \(devicesPerUser) devices on 2 instances given every node "
                + "(target_session_attrs=read-write), each device pushing every \(writePeriod) s; primary node "
                + "\(killed) killed 5 s in, node \(promoted) primary with a sync standby (wait-primary) "
                + "\(since(promotedAt)) after: "
                + "the first write pushed after the kill delivered to another device \(since(delivered)) after it "
                + "(the first acknowledged: \(since(firstAcknowledged))); pushes not acknowledged: "
                + (unacknowledged.isEmpty ? "none" : unacknowledged.joined(separator: ", "))
                + "; devices' connections closed by the server: "
                + (closes.isEmpty ? "none" : closes.joined(separator: ", "))
                + "; acknowledged writes lost: \(lostFromDatabase) from the database, \(lostFromDevice) from the other "
                + "device, of \(acknowledged) (goal <= \(Int(goalSeconds)) s, 0 lost: \(met ? "met" : "NOT met"))")
    }

    /// Polls `condition` every 0.1 s for at most `seconds`; throws when it never held.
    private static func waitUntil(_ what: String, seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw Cluster.Failure(description: "not \(what) after \(seconds) s") }
            usleep(100_000)
        }
    }
}

/// One device of P16 on a raw WebSocket (so that each push's acknowledgement is the server's reply
/// itself, with no client retrying behind it): a thread reads what the server sends, and another
/// pushes a new key every ``P16Failover/writePeriod`` from ``startWriting(after:)`` to
/// ``stopWriting()``, not waiting for the replies, as a device with a queue of changes would.
/// A connection the server closes is opened again, and the changes missed meanwhile asked for.
final class FailoverDevice: Sendable {
    /// One push: when it went, and when it was acknowledged or why it was not.
    struct Write {
        var sent: Double
        var acknowledged: Double?
        var failure: String?
    }

    private struct State {
        var socket: Int32?
        var connections = 0
        /// The last change number received, from which a new connection catches up.
        var latest: Int64 = 0
        var writes: [Int: Write] = [:]
        /// Pushes sent on the current connection and not answered yet.
        var pending: Set<Int> = []
        /// The other device's keys, by when they first arrived.
        var received: [String: Double] = [:]
        var closeReasons: [String] = []
        var nextCatchUp = FailoverDevice.catchUpIDs
    }

    let user: String
    let slot: Int
    private let port: Int
    private let token: String
    private let state = Mutex(State())
    private let running = Atomic<Bool>(true)
    private let writing = Atomic<Bool>(true)
    /// The threads still running, of the reader and the writer.
    private let threads = Atomic<Int>(1)

    /// The ids of `changes` requests, above any push's (a push's id is its write's number).
    private static let catchUpIDs = 1 << 40

    /// A catch-up can bring a page of changes in one message: kept whole, to be decoded.
    private static let largestMessage = 16 << 20

    /// Write `write`'s key, by the device `slot` of its user.
    static func key(slot: Int, write: Int) -> String { "p16-\(slot)-\(write)" }

    init(user: String, slot: Int, port: Int, token: String) {
        self.user = user
        self.slot = slot
        self.port = port
        self.token = token
        Thread { [self] in
            converse()
            threads.subtract(1, ordering: .relaxed)
        }.start()
    }

    var hasConnected: Bool { state.withLock { $0.connections > 0 } }
    var writes: [Int: Write] { state.withLock { $0.writes } }
    var receivedTimes: [String: Double] { state.withLock { $0.received } }
    var closeReasons: [String] { state.withLock { $0.closeReasons } }
    /// Whether every push sent has its answer, or lost its connection.
    var isAnswered: Bool { state.withLock { $0.pending.isEmpty } }

    private var isRunning: Bool { running.load(ordering: .relaxed) }

    /// Starts pushing, the first push `delay` seconds from now.
    func startWriting(after delay: Double) {
        threads.add(1, ordering: .relaxed)
        Thread { [self] in
            write(from: Date().timeIntervalSince1970 + delay)
            threads.subtract(1, ordering: .relaxed)
        }.start()
    }

    /// Stops pushing, once the writer is done: a push sent after this would be awaited by no one.
    func stopWriting() {
        writing.store(false, ordering: .relaxed)
        while threads.load(ordering: .relaxed) > 1 { usleep(10_000) }
    }

    /// Stops both threads and closes the connection; what it recorded stays.
    func stop() {
        writing.store(false, ordering: .relaxed)
        running.store(false, ordering: .relaxed)
        while threads.load(ordering: .relaxed) > 0 { usleep(10_000) }
    }

    private func write(from start: Double) {
        var number = 0
        var next = start
        while writing.load(ordering: .relaxed), isRunning {
            let wait = next - Date().timeIntervalSince1970
            if wait > 0 { usleep(useconds_t(wait * 1e6)) }
            guard writing.load(ordering: .relaxed) else { break }
            number += 1
            let now = Date().timeIntervalSince1970
            let record = WireRecord(
                key: Self.key(slot: slot, write: number), value: Data("\(now)".utf8), wall: Int64(now * 1000),
                counter: 0, origin: "\(user)-\(slot)")
            guard let text = try? SyncProtocol.encode(DeviceMessage(id: number, kind: .push, records: [record]))
            else { continue }
            state.withLock { state in
                guard let socket = state.socket else {
                    state.writes[number] = Write(sent: now, failure: "not connected")
                    return
                }
                // Under the lock: the reader closes the socket only under it too.
                RawWebSocket.send(RawWebSocket.maskedTextFrame(text), to: socket)
                state.writes[number] = Write(sent: now)
                state.pending.insert(number)
            }
            next += P16Failover.writePeriod
        }
    }

    /// Connects, reads until the connection ends, and connects again, until ``stop()``.
    private func converse() {
        while isRunning {
            guard let socket = RawWebSocket.connected(to: port) else {
                usleep(500_000)
                continue
            }
            RawWebSocket.send(RawWebSocket.upgradeRequest(token: token), to: socket)
            let reader = RawWebSocket.Reader(socket: socket, keep: Self.largestMessage) { [self] in isRunning }
            if reader.upgraded() {
                state.withLock { $0.socket = socket }
                reading: while true {
                    switch reader.next() {
                    case .text(let text):
                        handle(text)
                    case .closed(let reason):
                        state.withLock { $0.closeReasons.append(reason) }
                        break reading
                    case nil:
                        if isRunning { state.withLock { $0.closeReasons.append("reset (no close frame)") } }
                        break reading
                    }
                }
            }
            state.withLock { state in
                state.socket = nil
                for number in state.pending { state.writes[number]?.failure = "connection lost" }
                state.pending = []
            }
            close(socket)
            if isRunning { usleep(500_000) }
        }
    }

    private func handle(_ text: String) {
        guard let message = try? SyncProtocol.decode(ServerMessage.self, from: text) else { return }
        let now = Date().timeIntervalSince1970
        state.withLock { state in
            switch message.kind {
            case .welcome:
                if state.connections == 0 {
                    state.latest = message.latest ?? 0
                } else {
                    catchUp(&state)
                }
                state.connections += 1
            case .changed:
                receive(message.records ?? [], at: now, into: &state)
            case .reply:
                guard let id = message.id else { return }
                if id >= Self.catchUpIDs {
                    receive(message.records ?? [], at: now, into: &state)
                    if message.more == true { catchUp(&state) }
                } else if state.pending.remove(id) != nil {
                    if let refused = message.refused, !refused.isEmpty {
                        state.writes[id]?.failure = "refused"
                    } else {
                        state.writes[id]?.acknowledged = now
                    }
                }
            case .failure:
                guard let id = message.id, state.pending.remove(id) != nil else { return }
                state.writes[id]?.failure = message.error?.code.rawValue ?? "failure"
            }
        }
    }

    /// Asks for the changes after the last one received.
    private func catchUp(_ state: inout State) {
        guard let socket = state.socket,
            let text = try? SyncProtocol.encode(
                DeviceMessage(id: state.nextCatchUp, kind: .changes, after: state.latest))
        else { return }
        state.nextCatchUp += 1
        RawWebSocket.send(RawWebSocket.maskedTextFrame(text), to: socket)
    }

    /// Notes the other device's records among `records`.
    private func receive(_ records: [WireRecord], at now: Double, into state: inout State) {
        for record in records {
            state.latest = max(state.latest, record.seq ?? 0)
            if !record.key.hasPrefix("p16-\(slot)-"), state.received[record.key] == nil {
                state.received[record.key] = now
            }
        }
    }
}
