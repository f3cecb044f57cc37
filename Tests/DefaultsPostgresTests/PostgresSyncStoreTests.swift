import Defaults
import DefaultsSyncSQL
import Foundation
import Logging
import PostgresNIO
import Synchronization
import TestSupport
import Testing

@testable import DefaultsPostgres

/// One `PostgresSyncStore`, without the engine, against a real server whose connections are cut:
/// no call may wait without end.
@Suite("PostgresSyncStore when the connection is lost", .enabled(if: PostgresCluster.isAvailable), .mayBlock)
struct PostgresSyncStoreTests {
    /// What a running store reported, and the outcome of calls started in tasks of their own.
    final class Observed: Sendable {
        private let connections = Mutex(0)
        private let disconnections = Mutex<[String]>([])
        private let records = Mutex<[String]>([])

        var connectionCount: Int { connections.withLock { $0 } }
        var errors: [String] { disconnections.withLock { $0 } }
        /// The keys of the records received, in order.
        var received: [String] { records.withLock { $0 } }

        func record(_ event: SyncEvent) {
            switch event {
            case .connected: connections.withLock { $0 += 1 }
            case .disconnected(let error): disconnections.withLock { $0.append("\(error)") }
            case .received(let received): records.withLock { $0 += received.map(\.key) }
            }
        }
    }

    /// Runs `operation` in a task of its own and waits for its outcome, which stays a failure of
    /// the test (not a hang) when `operation` never ends.
    func outcome<Value: Sendable>(
        of what: String, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Result<Value, any Error> {
        let box = Box<Result<Value, any Error>>()
        Task {
            do {
                let value = try await operation()
                box.set(.success(value))
            } catch {
                box.set(.failure(error))
            }
        }
        return try await poll(what) { box.get() }
    }

    final class Box<Value: Sendable>: Sendable {
        private let value = Mutex<Value?>(nil)
        func set(_ new: Value) { value.withLock { $0 = new } }
        func get() -> Value? { value.withLock { $0 } }
    }

    /// A store on `cluster`; its `responseTimeout` generous where the deadline is not what a test
    /// is about, since a busy machine may take seconds to answer.
    func store(
        _ cluster: PostgresCluster, namespace: String = "com.example.store-\(UUID().uuidString.prefix(8))",
        responseTimeout: Duration = .seconds(60)
    ) throws -> PostgresSyncStore {
        try PostgresSyncStore(
            configuration: PostgresSyncStore.configuration(url: cluster.url),
            namespace: namespace,
            reconnectDelays: .milliseconds(50)...(.milliseconds(200)), responseTimeout: responseTimeout,
            livenessCheckInterval: .seconds(1))
    }

    /// A store running on `cluster`, once it has connected, with what it reported; cancel the task
    /// to stop it.
    func runningStore(
        _ cluster: PostgresCluster, namespace: String = "com.example.store-\(UUID().uuidString.prefix(8))",
        responseTimeout: Duration = .seconds(60)
    ) async throws -> (PostgresSyncStore, Observed, Task<Void, Never>) {
        let store = try store(cluster, namespace: namespace, responseTimeout: responseTimeout)
        let observed = Observed()
        let run = Task { await store.run { observed.record($0) } }
        try await waitUntil("a first connection") { observed.connectionCount == 1 }
        return (store, observed, run)
    }

    let record = SyncRecord(
        key: "k", value: Data("v".utf8), timestamp: SyncTimestamp(wallTime: 1, counter: 0, origin: "test"))

    @Test func aPushRightAfterTheServerCutsTheConnectionEndsAndTheNextConnectionTakesIt() async throws {
        try await PostgresCluster.with { cluster in
            // The push on the cut connection ends at the deadline at the latest.
            let (store, observed, run) = try await runningStore(cluster, responseTimeout: .seconds(10))
            defer { run.cancel() }

            // Cut from the server's side, and push at once, before the store may have noticed.
            try cluster.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'defaults'")
            _ = try await outcome(of: "the push to end") { try await store.push([record]) }

            try await waitUntil("a second connection") { observed.connectionCount >= 2 }
            #expect(!observed.errors.isEmpty, "the lost connection is reported")
            let pushed = try await outcome(of: "the push on the new connection") { try await store.push([record]) }
            #expect((try? pushed.get()) != nil, "\(pushed)")
            let timestamps = try await outcome(of: "the catch-up query") { try await store.timestamps() }
            #expect((try? timestamps.get())?["k"] == record.timestamp)
        }
    }

    func record(_ key: String, _ value: String) -> SyncRecord {
        SyncRecord(
            key: key, value: Data(value.utf8),
            timestamp: SyncTimestamp(wallTime: Int64(Date().timeIntervalSince1970 * 1000), counter: 0, origin: "test"))
    }

    @Test func aReconnectionFetchesWhatChangedWhileDisconnectedAndNothingElse() async throws {
        try await PostgresCluster.with { cluster in
            let namespace = "com.example.resume-\(UUID().uuidString.prefix(8))"
            let (writer, _, writing) = try await runningStore(cluster, namespace: namespace)
            defer { writing.cancel() }
            try await writer.push([record("before", "1")])

            let reader = try store(cluster, namespace: namespace)
            let observed = Observed()
            var reading = Task { await reader.run { observed.record($0) } }
            try await waitUntil("a first connection") { observed.connectionCount == 1 }
            // What was there before the store listened is the first catch-up's (timestamps()).
            #expect(try await reader.changesSinceLastConnection()?.map(\.key) == [])
            try await writer.push([record("seen", "1")])
            try await waitUntil("the change announced") { observed.received == ["seen"] }

            reading.cancel()
            await reading.value
            let missed = (0..<300).map { record("missed-\($0)", "\($0)") }
            try await writer.push(missed)
            try await writer.push([record("seen", "2")])
            reading = Task { await reader.run { observed.record($0) } }
            defer { reading.cancel() }
            try await waitUntil("a second connection") { observed.connectionCount == 2 }
            let changes = try #require(try await reader.changesSinceLastConnection())
            // In the order they committed (a push stores its records sorted by key).
            #expect(changes.map(\.key) == missed.map(\.key).sorted() + ["seen"])
            #expect(changes.last?.value == Data("2".utf8))
            #expect(try await reader.changesSinceLastConnection()?.isEmpty == true, "reported once")
        }
    }

    @Test func aStoreWhoseNumbersWentBackCannotSayWhatChanged() async throws {
        try await PostgresCluster.with { cluster in
            let (store, observed, run) = try await runningStore(cluster)
            defer { run.cancel() }
            try await store.push([record("k", "1")])
            try await waitUntil("the change announced") { observed.received == ["k"] }
            #expect(try await store.changesSinceLastConnection()?.isEmpty == true)
            // A database restored from an older backup, or emptied: the library must catch up in full.
            _ = try cluster.query("DELETE FROM defaults_sync_values", database: "defaults_sync")
            #expect(try await store.changesSinceLastConnection() == nil)
        }
    }

    @Test func aServerThatStopsAnsweringIsNoticedByTheLivenessCheck() async throws {
        try await PostgresCluster.with { cluster in
            let (_, observed, run) = try await runningStore(cluster, responseTimeout: .seconds(10))
            defer { run.cancel() }

            // Nothing is asked of the store: only its liveness check can notice the frozen server.
            // (A busy machine may have failed an attempt to connect before: not this test's case.)
            let earlier = observed.errors.count
            let connections = observed.connectionCount
            let frozen = try cluster.backends(of: "defaults")
            #expect(frozen.count == 2, "one connection listening, one pushing: \(frozen)")
            for pid in frozen { kill(pid, SIGSTOP) }
            defer {
                for pid in frozen { kill(pid, SIGCONT) }
            }
            try await waitUntil("a new connection") { observed.connectionCount > connections }
            let reported = observed.errors.dropFirst(earlier)
            #expect(reported.first?.contains("no answer to a liveness check within 10") == true, "\(reported)")
        }
    }

    @Test func aQueryOnAClosedConnectionIsGivenUpAtTheDeadline() async throws {
        try await PostgresCluster.with { cluster in
            let logger = Logger(label: "test")
            let connection = try await PostgresConnection.connect(
                configuration: PostgresSyncStore.configuration(url: cluster.url), id: 1, logger: logger)
            try await connection.close()
            // PostgresNIO 1.33 drops a query written to a closed connection, and never answers it.
            let result = try await outcome(of: "the bounded query") {
                try await Deadline.run(.seconds(2)) {
                    _ = try await connection.query("SELECT 1", logger: logger)
                }
            }
            #expect(throws: (any Error).self) { try result.get() }
        }
    }

    @Test func aTimeoutOrIntervalThatIsNotPositiveIsRefused() throws {
        let configuration = try PostgresSyncStore.configuration(url: "postgres://u@localhost/db?sslmode=disable")
        #expect(throws: PostgresSyncError.self) {
            try PostgresSyncStore(configuration: configuration, namespace: "n", responseTimeout: .zero)
        }
        #expect(throws: PostgresSyncError.self) {
            try PostgresSyncStore(configuration: configuration, namespace: "n", livenessCheckInterval: .seconds(-1))
        }
        #expect(throws: PostgresSyncError.self) {
            try PostgresSyncStore(configuration: configuration, namespace: "n", reconnectDelays: .zero...(.seconds(1)))
        }
    }
}
