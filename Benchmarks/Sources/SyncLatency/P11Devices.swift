import Defaults
import DefaultsSyncClient
import Foundation
import Synchronization

/// P11's devices: one process per device slot, each holding slot `me`'s device of every user (so
/// that each user's four devices are four processes), connected to the instances in turn; and
/// the witness, one user whose four devices are whole programs (``witness(_:suite:)``).
///
/// Arguments: me, devices per user, users, seconds. Environment: P11_URLS (comma-separated),
/// P11_TOKENS (a file, one token a line, one per user). Replies `connected`, then on
/// `go <start epoch seconds>` writes its share (user u's write n is made by slot n % devices, at
/// start + n + u / users seconds, key `p11-<u>-<n>`, value the wall time it was written), and
/// replies `result <expected> <received> <duplicated> <failed writes> <late>` and
/// `latencies <ms,...>` of the other slots' writes it received (``report(_:expected:writesEnd:)``).
enum P11Devices {
    struct Tally {
        var latencies: [Double] = []
        var received: Set<[Int]> = []
        var duplicated = 0
        /// Writes whose push failed, and the first failure.
        var failedWrites = 0
        var firstFailure: String?
    }

    /// What every connection's event handler adds to, shared by reference.
    final class Counters: Sendable {
        let tally = Mutex(Tally())
        /// The users whose store connected at least once, and the connections made after a first.
        let connectedUsers = Mutex(Set<Int>())
        let reconnections = Atomic<Int>(0)

        var connected: Int { connectedUsers.withLock { $0.count } }

        func connected(_ user: Int) {
            if !connectedUsers.withLock({ $0.insert(user).inserted }) {
                reconnections.add(1, ordering: .relaxed)
            }
        }
    }

    /// How long a device process waits for its `connections` stores to connect (and its parent,
    /// beyond that, for its `connected` and its `result`): 120 s for up to 1,200 of them, 0.1 s
    /// each beyond, so 250 s for the 2,500 of P11's 10,000-connection run, which connect all at
    /// once and may back off (up to 30 s between attempts) while the servers' accept queues are full.
    static func connectWait(connections: Int) -> TimeInterval {
        max(120, Double(connections) * 0.1)
    }

    /// How long past the 10 s after the writes' end a device waits for deliveries still missing,
    /// which then count as late, not lost.
    static let lateWindow: TimeInterval = 60

    /// The writes of all of P11's users together, each second (the witness's own aside).
    static let writesPerSecond = 250.0

    static func run(_ numbers: [Int]) async {
        guard numbers.count == 4, let urls = ProcessInfo.processInfo.environment["P11_URLS"]?.split(separator: ","),
            let tokenFile = ProcessInfo.processInfo.environment["P11_TOKENS"],
            let tokens = try? String(contentsOfFile: tokenFile, encoding: .utf8).split(separator: "\n")
        else { return Child.reply("error bad arguments") }
        let (me, devices, users, seconds) = (numbers[0], numbers[1], numbers[2], numbers[3])
        let counters = Counters()
        var stores: [SyncServiceStore] = []
        var tasks: [Task<Void, Never>] = []
        for user in 0..<users {
            let url = String(urls[(user * devices + me) % urls.count])
            guard let store = try? SyncServiceStore(url: url, token: String(tokens[user])) else {
                return Child.reply("error no store for user \(user)")
            }
            stores.append(store)
            tasks.append(
                Task {
                    await store.run { event in
                        switch event {
                        case .connected:
                            counters.connected(user)
                        case .received(let records):
                            let now = Date().timeIntervalSince1970
                            counters.tally.withLock { tally in
                                for record in records {
                                    let parts = record.key.split(separator: "-").compactMap { Int($0) }
                                    guard parts.count == 2, parts[1] % devices != me,
                                        let sent = record.value.flatMap({ Double(String(decoding: $0, as: UTF8.self)) })
                                    else { continue }
                                    if tally.received.insert(parts).inserted {
                                        tally.latencies.append((now - sent) * 1000)
                                    } else {
                                        tally.duplicated += 1
                                    }
                                }
                            }
                        case .disconnected:
                            break
                        }
                    }
                })
        }
        let deadline = Date().addingTimeInterval(connectWait(connections: users))
        while counters.connected < users, Date() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        Child.reply("connected \(counters.connected)")
        guard let line = readLine(), line.hasPrefix("go "), let start = Double(line.dropFirst(3)) else { return }
        // 250 writes a second in all, however many users: each user writes every `period` seconds
        // (1 s for P11's 250 users, 10 s for its 2,500), at its own offset within the period.
        let period = max(1, Double(users + 1) / writesPerSecond)
        let writes = Int((Double(seconds) / period).rounded(.down))
        await withTaskGroup(of: Void.self) { group in
            for user in 0..<users {
                let store = stores[user]
                group.addTask {
                    for write in stride(from: me, to: writes, by: devices) {
                        let at = start + (Double(write) + Double(user) / Double(users)) * period
                        let wait = at - Date().timeIntervalSince1970
                        if wait > 0 { try? await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                        let now = Date().timeIntervalSince1970
                        let record = SyncRecord(
                            key: "p11-\(user)-\(write)", value: Data("\(now)".utf8),
                            timestamp: SyncTimestamp(wallTime: Int64(now * 1000), counter: 0, origin: "d\(me)"))
                        do {
                            try await store.push([record])
                        } catch {
                            counters.tally.withLock { tally in
                                tally.failedWrites += 1
                                tally.firstFailure = tally.firstFailure ?? String(describing: error)
                            }
                        }
                    }
                }
            }
        }
        // The others write until the run's end, whenever this slot's own writes end.
        await report(
            counters, expected: users * (0..<writes).filter { $0 % devices != me }.count,
            writesEnd: start + Double(seconds))
        while let line = readLine(), line != "quit" {}
        for task in tasks { task.cancel() }
    }

    /// One device of the witness user: a whole program (`Defaults.iCloud` over `SyncServiceStore`)
    /// whose keys are declared, written and observed as an app's are. Arguments: me, devices,
    /// seconds. Device `me` writes its own key at its turns (write n at start + n + 0.5 s, by
    /// device n % devices) and times, with `Defaults.observe`, the others' writes reaching it.
    /// Replies as ``run(_:)`` does.
    static func witness(_ numbers: [Int], suite: FileSuite) async {
        guard numbers.count == 3 else { return Child.reply("error bad arguments") }
        let (me, devices, seconds) = (numbers[0], numbers[1], numbers[2])
        let keys = (0..<devices).map {
            Defaults.Key<String>("p11-witness-\($0)", default: "", suite: suite, iCloud: true)
        }
        await Defaults.iCloud.waitForSyncCompletion()
        let counters = Counters()
        let observations = keys.indices.filter { $0 != me }.map { slot in
            Defaults.observe(keys[slot], options: []) { change in
                let now = Date().timeIntervalSince1970
                let parts = change.newValue.split(separator: " ")
                guard parts.count == 2, let write = Int(parts[0]), let sent = Double(parts[1]) else { return }
                counters.tally.withLock { tally in
                    if tally.received.insert([slot, write]).inserted {
                        tally.latencies.append((now - sent) * 1000)
                    } else {
                        tally.duplicated += 1
                    }
                }
            }
        }
        Child.reply("connected 1")
        guard let line = readLine(), line.hasPrefix("go "), let start = Double(line.dropFirst(3)) else { return }
        for write in stride(from: me, to: seconds, by: devices) {
            let wait = start + Double(write) + 0.5 - Date().timeIntervalSince1970
            if wait > 0 { try? await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
            Defaults[keys[me]] = "\(write) \(Date().timeIntervalSince1970)"
        }
        let expected = (0..<seconds).filter { $0 % devices != me }.count
        await report(counters, expected: expected)
        while let line = readLine(), line != "quit" {}
        for observation in observations { observation.invalidate() }
    }

    /// Waits until the run's writes end (`writesEnd`, seconds since 1970) and up to 10 s more for
    /// the changes still on their way, then, for those still missing, up to ``lateWindow`` more, so
    /// that a delivery an overloaded machine made late is told from one lost. Replies with what
    /// arrived, and how much of it late.
    private static func report(_ counters: Counters, expected: Int, writesEnd: TimeInterval = 0) async {
        func received() -> Int { counters.tally.withLock { $0.received.count } }
        let settle = max(Date(), Date(timeIntervalSince1970: writesEnd)).addingTimeInterval(10)
        while received() < expected, Date() < settle {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let inTime = received()
        let late = settle.addingTimeInterval(lateWindow)
        while received() < expected, Date() < late {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let result = counters.tally.withLock { $0 }
        Child.reply(
            "result \(expected) \(result.received.count) \(result.duplicated) \(result.failedWrites) "
                + "\(result.received.count - inTime)")
        if let failure = result.firstFailure {
            FileHandle.standardError.write(Data("p11 device: a write failed: \(failure)\n".utf8))
        }
        let reconnections = counters.reconnections.load(ordering: .relaxed)
        if reconnections > 0 {
            FileHandle.standardError.write(Data("p11 device: \(reconnections) connection(s) made again\n".utf8))
        }
        Child.reply("latencies " + result.latencies.map { String(format: "%.2f", $0) }.joined(separator: ","))
    }
}
