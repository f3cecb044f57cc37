import DefaultsPropertyList
import Foundation
import Synchronization

@testable import Defaults
@testable import DefaultsSync

/// A sync store in the test's hands, as NIO's `EmbeddedChannel` is: it holds records in memory,
/// reports an event only when the test sends one (`send(_:)`, returning once the engine took it
/// in), and fails or refuses a push when told to. The other machines are the test: it puts their
/// records in with `hold(_:)` and sends them as `.received`.
final class EmbeddedSyncStore: DefaultsSyncStore {
    private struct Sent: Sendable {
        var event: SyncEvent
        var taken: CheckedContinuation<Void, Never>
    }

    private struct State {
        var records: [String: SyncRecord] = [:]
        /// Every record pushed, in order, whether stored or not.
        var pushed: [SyncRecord] = []
        /// The next pushes throw this, one push each.
        var failures: [any Error] = []
        /// Keys whose records are refused, with why.
        var refusals: [String: String] = [:]
    }

    private let state = Mutex(State())
    private let events: AsyncStream<Sent>
    private let sender: AsyncStream<Sent>.Continuation

    let description = "embedded://test"

    init() {
        (events, sender) = AsyncStream<Sent>.makeStream()
    }

    /// Reports `event` from the store's task, as a store reading its connection does, and
    /// returns once the engine admitted it (its `report` returned).
    func send(_ event: SyncEvent) async {
        await withCheckedContinuation { taken in
            sender.yield(Sent(event: event, taken: taken))
        }
    }

    /// Puts `record` on the store as another machine's push would, where it is later than the
    /// record held; nothing is reported.
    func hold(_ record: SyncRecord) {
        state.withLock { Self.store(record, in: &$0) }
    }

    /// What the store holds for `key`.
    func record(forKey key: String) -> SyncRecord? { state.withLock { $0.records[key] } }

    /// Every record pushed so far, in order.
    var pushed: [SyncRecord] { state.withLock { $0.pushed } }

    /// The next push throws `error`.
    func failNextPush(with error: any Error) { state.withLock { $0.failures.append(error) } }

    /// Pushes of `key` are refused, with `reason`, until `accept(_:)`.
    func refuse(_ key: String, reason: String) { state.withLock { $0.refusals[key] = reason } }

    func accept(_ key: String) { state.withLock { $0.refusals[key] = nil } }

    private static func store(_ record: SyncRecord, in state: inout State) {
        if let held = state.records[record.key], held.timestamp >= record.timestamp { return }
        state.records[record.key] = record
    }

    // MARK: DefaultsSyncStore

    func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        for await sent in events {
            await report(sent.event)
            sent.taken.resume()
            if Task.isCancelled { break }
        }
    }

    func timestamps() async throws -> [String: SyncTimestamp] {
        state.withLock { $0.records.mapValues(\.timestamp) }
    }

    func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        state.withLock { state in keys.compactMap { state.records[$0] } }
    }

    func push(_ records: [SyncRecord]) async throws {
        try state.withLock { state in
            state.pushed += records
            if !state.failures.isEmpty {
                throw state.failures.removeFirst()
            }
            var refused: [String: String] = [:]
            for record in records {
                if let reason = state.refusals[record.key] {
                    refused[record.key] = reason
                } else {
                    Self.store(record, in: &state)
                }
            }
            if !refused.isEmpty {
                throw SyncRecordsRefused(refused)
            }
        }
    }
}

extension SyncRecord {
    /// A record of `value` encoded as the engine encodes values.
    static func of(_ key: String, _ value: PropertyListValue?, at timestamp: SyncTimestamp) throws -> SyncRecord {
        SyncRecord(key: key, value: try SyncValue.encode(value, key: key), timestamp: timestamp)
    }

    /// The value this record carries.
    var decodedValue: PropertyListValue? {
        get throws { try value.map { try PropertyList.decodeValue($0) } }
    }
}
