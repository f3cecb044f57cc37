import Defaults
import DefaultsSyncClient
import DefaultsSyncProtocol
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// Many devices at once, as the client users run connects them: every change reaches every other
/// device of its user once, and no other user's device. Nothing about time is asserted.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct ManyConnectionsTests {
    static let users = 500
    static let devicesPerUser = 4
    static let writesPerUser = 2

    /// What the devices received, by device: each key and how many times.
    final class Tally: Sendable {
        let connected = Atomic<Int>(0)
        let disconnected = Atomic<Int>(0)
        let received = Mutex<[Int: [String: Int]]>([:])

        func add(_ records: [SyncRecord], device: Int) {
            received.withLock { received in
                for record in records { received[device, default: [:]][record.key, default: 0] += 1 }
            }
        }
    }

    /// Open files for this process's devices (and a margin), after raising the soft limit as an
    /// instance does (``OpenFilesLimit``).
    static let hasOpenFiles = (OpenFilesLimit.raise() ?? 0) >= UInt64(users * devicesPerUser + 500)

    @Test(
        .timeLimit(.minutes(10)),
        .enabled(if: hasOpenFiles, "needs a hard limit of open files above 2,500 (ulimit -Hn)"))
    func twoThousandConnectionsOverTwoInstancesGetEveryChangeOfTheirUserOnce() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        // Small pools: the devices share them (the pool does not grow with the devices), and the
        // other suites' servers share the test cluster's 100 connections.
        let options = ["--database-connections", "4"]
        let instances = [
            try await SyncServerProcess(database: cluster.url, keyFile: key.path, options: options),
            try await SyncServerProcess(database: cluster.url, keyFile: key.path, options: options),
        ]
        var tokens: [String] = []
        for user in 0..<Self.users { tokens.append(try await key.token(user: "many-\(user)")) }
        let tally = Tally()
        var stores: [SyncServiceStore] = []
        var runs: [Task<Void, Never>] = []
        defer { for run in runs { run.cancel() } }
        // Device d of user u is number u * 4 + d; a user's devices alternate between the instances.
        // They come 200 at a time, each wave once the last is connected: the other suites' servers
        // share this machine, and a burst of 2,000 handshakes would starve their deadlines.
        for device in 0..<(Self.users * Self.devicesPerUser) {
            if device > 0, device % 200 == 0 {
                try await waitUntil("\(device) devices connected", timeout: .seconds(300)) {
                    tally.connected.load(ordering: .relaxed) >= device
                }
            }
            let store = try SyncServiceStore(
                url: instances[device % instances.count].url, token: tokens[device / Self.devicesPerUser])
            stores.append(store)
            runs.append(
                Task {
                    await store.run { event in
                        switch event {
                        case .connected: tally.connected.add(1, ordering: .relaxed)
                        case .received(let records): tally.add(records, device: device)
                        case .disconnected: tally.disconnected.add(1, ordering: .relaxed)
                        }
                    }
                })
        }
        let devices = stores.count
        try await waitUntil("\(devices) devices connected", timeout: .seconds(300)) {
            tally.connected.load(ordering: .relaxed) >= devices
        }
        // Each user's first device writes; at most 50 users' writes at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in 0..<Self.users {
                if user >= 50 { try await group.next() }
                let writer = stores[user * Self.devicesPerUser]
                group.addTask {
                    for write in 0..<Self.writesPerUser {
                        let record = SyncRecord(
                            key: "k-\(user)-\(write)", value: Data("\(write)".utf8),
                            timestamp: SyncTimestamp(wallTime: 1_000 + Int64(write), counter: 0, origin: "w\(user)"))
                        try await writer.push([record])
                    }
                }
            }
            try await group.waitForAll()
        }
        /// The keys a device of `user` should hold.
        func expected(_ user: Int) -> Set<String> { Set((0..<Self.writesPerUser).map { "k-\(user)-\($0)" }) }
        // The writer too: the fan-out brings a change to every device of its user, its own included.
        let readers = Array(0..<devices)
        try await waitUntil("every device holding its user's changes", timeout: .seconds(300)) {
            let received = tally.received.withLock { $0 }
            return readers.allSatisfy { device in
                expected(device / Self.devicesPerUser).isSubset(of: Set(received[device]?.keys ?? [:].keys))
            }
        }
        // Anything doubled or misdelivered would have come by now too.
        try await Task.sleep(for: .seconds(2))
        let received = tally.received.withLock { $0 }
        let wrong = readers.filter { device in
            let keys = received[device] ?? [:]
            return Set(keys.keys) != expected(device / Self.devicesPerUser) || keys.values.contains { $0 != 1 }
        }
        #expect(wrong.isEmpty, "\(wrong.count) devices with a change missing, doubled or another user's")
        // No device was closed or lost its connection, whatever the reason.
        #expect(tally.connected.load(ordering: .relaxed) == devices, "a device connected again")
        #expect(tally.disconnected.load(ordering: .relaxed) == 0, "a device lost its connection")
    }
}
