import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import Synchronization
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// One user at every limit of theirs leaves the database pool to the others, and a device closed as
/// a slow consumer that connects again at once is told to wait longer each time.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct FairnessTests {
    /// The greedy user's namespaces and connections to each: 32 connections, the most a user may
    /// hold, over more namespaces than their share of the pool.
    static let greedyNamespaces = (0..<8).map { "greedy-\($0)" }
    static let greedyConnectionsPerNamespace = 4
    /// The other users, each with a device that writes and one that is to receive the writes.
    static let otherUsers = 100
    static let writesPerUser = 3

    @Test(.timeLimit(.minutes(3)))
    func oneUserPushingAtEveryLimitLeavesThePoolToTheOthers() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        // The default pool: 20 connections, a quarter of them a user's share.
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let share = 20 / 4

        // The others' devices connect first: each user's reader is welcomed before anyone writes.
        let readersWelcomed = Tally()
        let writersWelcomed = Tally()
        let othersGo = Flag()
        var others: [(reader: Task<[String], any Error>, writer: Task<[ServerMessage], any Error>)] = []
        for user in 0..<Self.otherUsers {
            let token = try await key.token(user: "fair-\(user)")
            others.append(
                (
                    Task { try await Self.read(server.url, token: token, writes: Self.writesPerUser, readersWelcomed) },
                    Task {
                        try await Self.write(
                            server.url, token: token, writes: Self.writesPerUser, writersWelcomed, go: othersGo)
                    }
                ))
        }
        try await waitUntil("the other users' devices welcomed", timeout: .seconds(60)) {
            readersWelcomed.value == Self.otherUsers
                && writersWelcomed.value == Self.otherUsers
        }

        // The greedy user: every connection pushes 1,000 records again as soon as it is answered.
        // Each namespace written to once first, so that no push waits for the lock that counts a
        // user's namespaces.
        for namespace in Self.greedyNamespaces {
            let record = WireRecord(key: "k0", value: Data("first".utf8), wall: 0, counter: 0, origin: "g")
            let answers = try await SlowConsumerTests.ask(
                server.url, token: try await key.token(user: "greedy", namespace: namespace),
                [DeviceMessage(id: 1, kind: .push, records: [record])])
            #expect(answers.map(\.kind) == [.reply])
        }
        let greedyStop = Flag()
        let greedyReplies = Tally()
        var greedy: [Task<Void, any Error>] = []
        for namespace in Self.greedyNamespaces {
            let token = try await key.token(user: "greedy", namespace: namespace)
            for _ in 0..<Self.greedyConnectionsPerNamespace {
                greedy.append(
                    Task {
                        try await Self.pushGreedily(
                            server.url, token: token, replies: greedyReplies, until: greedyStop)
                    })
            }
        }
        // At its limits: pushes wait on every one of its connections, and some are answered.
        try await waitUntil("the greedy user's pushes answered", timeout: .seconds(60)) {
            greedyReplies.value >= Self.greedyNamespaces.count
        }

        // Meanwhile, what the database holds for the greedy user, sampled.
        let sampling = Flag()
        let sampler = Task { try Self.sampleLocks(cluster, until: sampling) }
        let greedyRepliesBefore = greedyReplies.value
        othersGo.raise()
        var written: [[ServerMessage]] = []
        var delivered: [[String]] = []
        for (reader, writer) in others {
            written.append(try await writer.value)
            delivered.append(try await reader.value)
        }
        sampling.raise()
        let samples = try await sampler.value
        // Nor is the greedy user starved: its pushes go on being answered.
        try await waitUntil("a greedy push answered after the others' writes", timeout: .seconds(30)) {
            greedyReplies.value > greedyRepliesBefore
        }
        greedyStop.raise()
        for task in greedy { try await task.value }

        let expectedKeys = (0..<Self.writesPerUser).map { "w\($0)" }
        let acknowledged = written.filter { $0.count == Self.writesPerUser && $0.allSatisfy(Self.isStored) }
        #expect(acknowledged.count == Self.otherUsers, "\(written.first { !$0.allSatisfy(Self.isStored) } ?? [])")
        #expect(delivered.filter { Set($0) == Set(expectedKeys) }.count == Self.otherUsers)
        // The greedy user's pushes stayed within its share.
        #expect(!samples.isEmpty)
        let mostWaiting = samples.map(\.waitingOnOwnerLocks).max() ?? 0
        let mostHeld = samples.map(\.greedyPushesInDatabase).max() ?? 0
        #expect(mostWaiting <= 1, "\(mostWaiting) connections waited on an owner's lock at once")
        #expect(mostHeld <= share, "\(mostHeld) of the greedy user's pushes held pooled connections at once")
    }

    /// What the database showed at one moment.
    struct LockSample: Sendable {
        /// The database's connections waiting for an advisory lock (an owner's, while pushing).
        var waitingOnOwnerLocks: Int
        /// The greedy user's pushes in a transaction: holding or waiting for their owner's lock.
        var greedyPushesInDatabase: Int
    }

    /// Samples the advisory locks until `stop` is raised.
    static func sampleLocks(_ cluster: PostgresCluster, until stop: Flag) throws -> [LockSample] {
        // The owners' lock keys, as the schema's `defaults_sync_service_lock` computes them.
        let keys = greedyNamespaces.map {
            "hashtextextended('defaults_sync_service ' || octet_length('greedy') || ':greedy' || '\($0)', 0)"
        }
        let query = """
            WITH keys AS (SELECT unnest(ARRAY[\(keys.joined(separator: ", "))]) AS k)
            SELECT (SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'),
                (SELECT count(*) FROM pg_locks AS l JOIN keys ON l.locktype = 'advisory' AND l.objsubid = 1
                    AND l.classid = ((keys.k >> 32) & 4294967295)::oid AND l.objid = (keys.k & 4294967295)::oid)
            """
        var samples: [LockSample] = []
        while !stop.isRaised {
            let row = try cluster.query(query).first ?? ""
            let numbers = row.split(separator: "|").compactMap { Int($0) }
            if numbers.count == 2 {
                samples.append(LockSample(waitingOnOwnerLocks: numbers[0], greedyPushesInDatabase: numbers[1]))
            }
            usleep(100_000)
        }
        return samples
    }

    static func isStored(_ answer: ServerMessage) -> Bool { answer.kind == .reply && answer.refused == nil }

    /// A device of the greedy user: pushes 1,000 small records, newer each time, as soon as the
    /// last push is answered (after the wait a refusal names), reading whatever else comes.
    static func pushGreedily(
        _ url: String, token: String, replies: Tally, until stop: Flag
    ) async throws {
        _ = try await RawDevice.connect(url, token: token, deadline: .seconds(150)) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            _ = try await RawDevice.next(&iterator)
            var id = 0
            while !stop.isRaised {
                id += 1
                // Later than every push before it, whichever connection made that one.
                let version = Int64(Date().timeIntervalSince1970 * 1_000_000)
                let records = (0..<SyncProtocol.maximumRecordsPerMessage).map {
                    WireRecord(key: "k\($0)", value: Data("greedy".utf8), wall: version, counter: 0, origin: "g")
                }
                try await outbound.write(
                    .text(try SyncProtocol.encode(DeviceMessage(id: id, kind: .push, records: records))))
                while let message = try await RawDevice.next(&iterator) {
                    guard message.id == id else { continue }
                    if let wait = message.error?.retryAfterMilliseconds {
                        try await Task.sleep(for: .milliseconds(wait))
                    } else if message.kind == .reply {
                        replies.increment()
                    }
                    break
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return []
        }
    }

    /// One of the other users' devices: once welcomed and told to go, writes `writes` keys, one
    /// push each, and returns the answers.
    static func write(_ url: String, token: String, writes: Int, _ welcomed: Tally, go: Flag) async throws
        -> [ServerMessage]
    {
        try await RawDevice.connect(url, token: token, deadline: .seconds(150)) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            _ = try await RawDevice.next(&iterator)
            welcomed.increment()
            while !go.isRaised { try await Task.sleep(for: .milliseconds(20)) }
            var answers: [ServerMessage] = []
            for write in 0..<writes {
                let record = WireRecord(
                    key: "w\(write)", value: Data("\(write)".utf8), wall: Int64(write + 1), counter: 0, origin: "o")
                try await outbound.write(
                    .text(try SyncProtocol.encode(DeviceMessage(id: write, kind: .push, records: [record]))))
                while let message = try await RawDevice.next(&iterator) {
                    if message.id == write {
                        answers.append(message)
                        break
                    }
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return answers
        }.messages
    }

    /// The other device of the same user: once welcomed, waits for `writes` keys to reach it and
    /// returns the keys it received.
    static func read(_ url: String, token: String, writes: Int, _ welcomed: Tally) async throws -> [String] {
        try await RawDevice.connect(url, token: token, deadline: .seconds(150)) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            _ = try await RawDevice.next(&iterator)
            welcomed.increment()
            var changes: [ServerMessage] = []
            while Set(changes.flatMap { $0.records ?? [] }.map(\.key)).count < writes,
                let message = try await RawDevice.next(&iterator)
            {
                if message.kind == .changed { changes.append(message) }
            }
            try await outbound.close(.normalClosure, reason: nil)
            return changes
        }.messages.flatMap { $0.records ?? [] }.map(\.key)
    }

    // MARK: Reconnecting slow consumers

    @Test(.timeLimit(.minutes(2)))
    func aSlowConsumerConnectingAgainAtOnceIsToldToWaitLongerEachTime() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--slow-consumer-timeout", "1"])
        let token = try await key.token(user: "slow-again")
        let big = Data((0..<SlowConsumerTests.valueBytes).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 >> 8) })
        _ = try await SlowConsumerTests.ask(
            server.url, token: token,
            [
                DeviceMessage(
                    id: 1, kind: .push, records: [WireRecord(key: "big", value: big, wall: 1, counter: 0, origin: "t")])
            ])

        // A device that asks for the big value and never reads: closed as a slow consumer.
        let slow = try #require(LoopbackSocket(port: server.port))
        slow.send(SlowConsumerTests.upgradeRequest(token: token))
        for id in 1...20 {
            slow.send(
                SlowConsumerTests.maskedTextFrame(
                    try SyncProtocol.encode(DeviceMessage(id: id, kind: .records, keys: ["big"]))))
        }
        let closedLine = try await poll("the device closed as a slow consumer", timeout: .seconds(60)) {
            server.log.split(separator: "\n").first { $0.contains("slow consumer") && $0.contains("slow-again") }
        }
        // The close names a wait too.
        let firstWait = SyncCloseReason.retryAfter(closeReason: String(closedLine))
        #expect(firstWait != nil, "\(closedLine)")

        // It connects again at once, again and again: refused, told to wait longer each time.
        var waits: [Duration] = []
        for _ in 0..<3 {
            let closed = try await RawDevice.connect(server.url, token: token, deadline: .seconds(30)) {
                inbound, outbound in
                var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
                let first = try await RawDevice.next(&iterator)
                // Welcomed (not refused): leaves, so that the test sees no reason.
                try await outbound.close(.normalClosure, reason: nil)
                return first.map { [$0] } ?? []
            }
            #expect(closed.code == .unknown(1013), "\(String(describing: closed.code))")
            #expect(SyncCloseReason(closeReason: closed.reason) == .tryAgainLater, "\(closed.reason ?? "no reason")")
            waits.append(try #require(SyncCloseReason.retryAfter(closeReason: closed.reason)))
        }
        #expect(waits == waits.sorted() && Set(waits).count == waits.count, "\(waits)")
        if let firstWait, let second = waits.first { #expect(second > firstWait, "\(firstWait) then \(waits)") }
        withExtendedLifetime(slow) {}
    }

    // MARK: The policies alone

    @Test func aUsersRequestsHoldAtMostTheirShareWaitInOrderAndPastTheBoundAreRefused() async throws {
        let share = UserDatabaseShare(connections: 2, userConnections: 3)
        let gate = Gate()
        let entered = Entries()
        var tasks: [Task<Void, any Error>] = []
        for request in 0..<5 {
            tasks.append(
                Task {
                    try await share.withConnection(of: "greedy") {
                        entered.append(request)
                        await gate.wait()
                    }
                })
            // Each in the queue before the next comes.
            try await waitUntil("request \(request) held or waiting", timeout: .seconds(10)) {
                entered.all.count + share.waiting(of: "greedy") == request + 1
            }
        }
        #expect(share.held(by: "greedy") == 2 && share.waiting(of: "greedy") == 3)
        await #expect(throws: UserDatabaseShare.Refusal.self) {
            try await share.withConnection(of: "greedy") {}
        }
        // Another user is served at once.
        #expect(try await share.withConnection(of: "other") { share.held(by: "other") } == 1)
        gate.open()
        for task in tasks { try await task.value }
        // In order of asking: the two let in together when the gate opens may start in either
        // order, and the last is let in only when one of them is done (so it may start before the
        // other, on a busy machine), never before both.
        #expect(entered.all.prefix(2) == [0, 1] && [2, 3].contains(entered.all.dropFirst(2).first))
        #expect(entered.all.count == 5 && Set(entered.all.dropFirst(2)) == [2, 3, 4])
        #expect(share.held(by: "greedy") == 0 && share.waiting(of: "greedy") == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueueAndTheTurnGoesToTheNext() async throws {
        let turns = OwnerTurns()
        let owner = Owner(user: "u", namespace: "n")
        let gate = Gate()
        let first = Task { try await turns.inTurn(of: owner) { await gate.wait() } }
        try await waitUntil("the first push in its turn", timeout: .seconds(10)) { gate.waiters == 1 }
        let cancelled = Task { try await turns.inTurn(of: owner) {} }
        try await waitUntil("the second push waiting", timeout: .seconds(10)) { turns.waiting(of: owner) == 1 }
        let third = Task { try await turns.inTurn(of: owner) { 3 } }
        try await waitUntil("the third push waiting", timeout: .seconds(10)) { turns.waiting(of: owner) == 2 }
        // Another owner's push does not wait.
        #expect(try await turns.inTurn(of: Owner(user: "u", namespace: "other")) { 1 } == 1)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(turns.waiting(of: owner) == 1)
        gate.open()
        try await first.value
        #expect(try await third.value == 3)
        #expect(turns.waiting(of: owner) == 0)
    }

    @Test func aSlowConsumersWaitGrowsWithEachOffenceAndIsForgottenAfterItBehaves() {
        let start = ContinuousClock.now
        let admission = ReconnectionAdmission(
            backOff: .init(first: .seconds(5), longest: .seconds(60), forgottenAfter: .seconds(60)), now: start)
        let device = TokenClaims(user: "u", namespace: "n", expires: 2_000_000_000, issuedAt: 1)
        #expect(admission.refusal(of: device, now: start) == nil)
        #expect(admission.closedAsSlowConsumer(device, now: start) == .seconds(5))
        // Connecting again too soon: refused, and told a longer wait each time, counted from the close.
        #expect(admission.refusal(of: device, now: start + .seconds(1)) == .seconds(9))
        #expect(admission.refusal(of: device, now: start + .seconds(2)) == .seconds(18))
        #expect(admission.refusal(of: device, now: start + .seconds(3)) == .seconds(37))
        #expect(admission.refusal(of: device, now: start + .seconds(4)) == .seconds(56))
        #expect(admission.refusal(of: device, now: start + .seconds(5)) == .seconds(55))
        // Admitted once its wait is over; closed again, it waits the longest.
        #expect(admission.refusal(of: device, now: start + .seconds(61)) == nil)
        #expect(admission.closedAsSlowConsumer(device, now: start + .seconds(70)) == .seconds(60))
        // Behaving for a while past its wait, it is forgotten: a close asks the first wait again.
        let later = start + .seconds(70 + 60 + 61)
        #expect(admission.refusal(of: device, now: later) == nil)
        #expect(admission.closedAsSlowConsumer(device, now: later + .seconds(1)) == .seconds(5))
    }

    @Test func aUserWhoseDevicesKeepBeingClosedWaitsWhateverTokenTheyBring() {
        let start = ContinuousClock.now
        let admission = ReconnectionAdmission(backOff: .init(first: .seconds(5), longest: .seconds(300)), now: start)
        func device(_ issued: Int64, user: String = "u") -> TokenClaims {
            TokenClaims(user: user, namespace: "n", expires: 2_000_000_000, issuedAt: issued)
        }
        for issued in 1...Int64(ReconnectionAdmission.userAllowance) {
            _ = admission.closedAsSlowConsumer(device(issued), now: start)
        }
        // A few of a user's devices closed: only they wait.
        #expect(admission.refusal(of: device(100), now: start) == nil)
        // One more: every device of the user waits, another user's none.
        #expect(admission.closedAsSlowConsumer(device(4), now: start) == .seconds(5))
        #expect(admission.refusal(of: device(101), now: start) == .seconds(10))
        #expect(admission.refusal(of: device(101, user: "other"), now: start) == nil)
    }

    /// A user's pushes are charged what they fan out: the records stored, once for each of the
    /// namespace's devices on the instance. A push within the user's burst for one device but not
    /// for three waits when three are connected, and another user's push is answered meanwhile;
    /// then it is answered too.
    @Test(.timeLimit(.minutes(2)))
    func aUsersPushesAreAdmittedAtTheRateOfWhatTheyFanOut() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        // 100 bytes a second, 400 at once. A push of 390 bytes leaves 10 with one device; with three
        // it fans out 1,170, and the next push waits some 8 s.
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--max-user-push-bytes-per-second", "100"])
        @Sendable func records(_ version: Int64) -> [WireRecord] {
            // 2 + 36 + 1 bytes each, as the quota counts them.
            (0..<10).map {
                WireRecord(
                    key: "k\($0)", value: Data(String(repeating: "x", count: 36).utf8), wall: version, counter: 0,
                    origin: "p")
            }
        }
        #expect(BytesBudget.cost(of: records(1)) == 390)
        let token = try await key.token(user: "pusher")
        let stop = Flag()
        let welcomed = Tally()
        var listening: [Task<RawDevice.Closed, any Error>] = []
        for _ in 0..<2 {
            listening.append(
                Task {
                    try await RawDevice.connect(server.url, token: token, deadline: .seconds(100)) {
                        inbound, outbound in
                        var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
                        _ = try await RawDevice.next(&iterator)
                        welcomed.increment()
                        while !stop.isRaised { try await Task.sleep(for: .milliseconds(20)) }
                        try await outbound.close(.normalClosure, reason: nil)
                        return []
                    }
                })
        }
        defer { stop.raise() }
        try await waitUntil("the namespace's other two devices welcomed") { welcomed.value == 2 }

        let firstAnswered = Flag()
        let secondAnswered = Flag()
        let pushing = Task {
            try await RawDevice.connect(server.url, token: token, deadline: .seconds(100)) { inbound, outbound in
                var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
                _ = try await RawDevice.next(&iterator)
                var answers: [ServerMessage] = []
                for (id, answered) in [(1, firstAnswered), (2, secondAnswered)] {
                    try await outbound.write(
                        .text(
                            try SyncProtocol.encode(
                                DeviceMessage(id: id, kind: .push, records: records(Int64(id))))))
                    while let message = try await RawDevice.next(&iterator) {
                        guard message.id == id else { continue }
                        answers.append(message)
                        break
                    }
                    answered.raise()
                }
                try await outbound.close(.normalClosure, reason: nil)
                return answers
            }.messages
        }
        try await waitUntil("the first push answered") { firstAnswered.isRaised }

        let other = try await SlowConsumerTests.ask(
            server.url, token: try await key.token(user: "other"),
            [
                DeviceMessage(
                    id: 1, kind: .push,
                    records: [WireRecord(key: "k", value: Data("v".utf8), wall: 1, counter: 0, origin: "o")])
            ])
        #expect(other.map(\.kind) == [.reply], "another user's push is answered")
        #expect(!secondAnswered.isRaised, "the second push was admitted before its user's rate allowed it")
        // Admitted once the user's account allows it: both stored, nothing refused.
        let answers = try await pushing.value
        #expect(answers.map(\.kind) == [.reply, .reply] && answers.allSatisfy { $0.refused == nil }, "\(answers)")
        stop.raise()
        for task in listening { _ = try await task.value }
    }

    @Test func aUsersReadsAreAdmittedAtTheirRateOfBytes() {
        let start = ContinuousClock.now
        let budget = BytesBudget(bytesPerSecond: 1_000_000, now: start)
        // A burst of four seconds' worth passes at once.
        #expect(budget.admit("u", now: start) == .admitted(estimate: 0))
        budget.settle("u", estimate: 0, cost: 5_000_000, now: start)
        // Overdrawn by a second's worth: the next read waits that long; another user's does not.
        #expect(budget.admit("u", now: start) == .wait(.milliseconds(1001)))
        #expect(budget.admit("other", now: start) == .admitted(estimate: 0))
        // Then it is charged what the last cost, so that the reads waiting with it wait again.
        #expect(budget.admit("u", now: start + .seconds(1)) == .admitted(estimate: 5_000_000))
        #expect(budget.admit("u", now: start + .seconds(1)) == .wait(.milliseconds(5001)))
        budget.settle("u", estimate: 5_000_000, cost: 1_000, now: start + .seconds(1))
        #expect(budget.admit("u", now: start + .milliseconds(1010)) == .admitted(estimate: 1_000))
    }
}

/// Numbers several tasks append to, in order.
final class Entries: Sendable {
    private let list = Mutex<[Int]>([])

    var all: [Int] { list.withLock { $0 } }

    func append(_ number: Int) { list.withLock { $0.append(number) } }
}

/// Holds whoever waits until it is opened.
final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var waiters: Int { state.withLock { $0.waiters.count } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
