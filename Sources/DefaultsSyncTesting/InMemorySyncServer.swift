import Defaults
import Foundation
import Synchronization

/// The shared side of ``InMemorySyncStore``s: what a sync server and its database would hold,
/// in memory, for tests. Give each simulated machine a store of its own on one server.
///
/// It keeps one record per key and replaces it only with a record whose timestamp is later (the
/// last writer wins), or in place of one stamped more than a day ahead of its clock, as the
/// stores do, numbers every stored change in the order it is stored, as PostgreSQL's
/// store does, and delivers the records each push stored to every other connected store.
/// Everything happens at the call, in order, with no timer: a test is deterministic unless it
/// gives a store a ``InMemorySyncStore/latency``.
///
/// Besides what a store can do, a test can look inside (``records``, ``pushCount``), make the
/// server refuse keys (``refusedKeys``), and act as someone with access to the database would
/// (``overwrite(_:)``, ``removeRecords(forKeys:)``).
public final class InMemorySyncServer: Sendable {
    /// A stored record and the number of the change that stored it.
    struct Row: Sendable {
        var record: SyncRecord
        var number: Int
    }

    /// A connected store's stream of deliveries, and which of its connections it belongs to.
    struct Connection: Sendable {
        var generation: Int
        var deliveries: AsyncStream<Delivery>.Continuation
    }

    /// What reaches a connected store, in the order the changes were stored.
    enum Delivery: Sendable {
        /// Records another store pushed (or someone overwrote), stored up to change `through`.
        case records([SyncRecord], through: Int)
        /// The store's own push, stored up to change `through`: nothing to report, but the store
        /// has now seen every change up to it.
        case ownChanges(through: Int)
    }

    private struct State {
        var rows: [String: Row] = [:]
        var latestNumber = 0
        var pushCount = 0
        var refusedKeys: [String: String] = [:]
        var nextStoreID = 0
        var connections: [Int: Connection] = [:]
        /// Per store, the change number up to which it reported every change, or saw it there
        /// when it first connected.
        var positions: [Int: Int] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty server.
    public init() {}

    // MARK: Inspection

    /// The records the server holds, by key.
    public var records: [String: SyncRecord] {
        state.withLock { $0.rows.mapValues(\.record) }
    }

    /// The record the server holds for `key`, if any.
    public func record(forKey key: String) -> SyncRecord? {
        state.withLock { $0.rows[key]?.record }
    }

    /// How many pushes reached the server, whether they stored anything or not (a push failed with
    /// ``InMemorySyncStore/failNextPushes(_:with:)`` never reaches it).
    public var pushCount: Int {
        state.withLock { $0.pushCount }
    }

    /// The number of the last change stored; 0 when nothing was.
    public var latestChangeNumber: Int {
        state.withLock { $0.latestNumber }
    }

    /// Keys the server refuses, each with the reason a push's `SyncRecordsRefused` gives: a push
    /// stores every other record and throws it naming these, as a server refuses a name too
    /// long for its index. Empty unless set.
    public var refusedKeys: [String: String] {
        get { state.withLock { $0.refusedKeys } }
        set { state.withLock { $0.refusedKeys = newValue } }
    }

    // MARK: Acting on the database

    /// Stores `records` as they are, whatever the server holds (as someone with access to the
    /// database could, for example putting back an older record), numbers them as new changes,
    /// and delivers them to every connected store.
    public func overwrite(_ records: [SyncRecord]) {
        state.withLock { state in
            guard !records.isEmpty else { return }
            for record in records {
                state.latestNumber += 1
                state.rows[record.key] = Row(record: record, number: state.latestNumber)
            }
            for connection in state.connections.values {
                connection.deliveries.yield(.records(records, through: state.latestNumber))
            }
        }
    }

    /// Deletes the records of `keys` (as someone with access to the database could), telling no
    /// store.
    public func removeRecords(forKeys keys: [String]) {
        state.withLock { state in
            for key in keys {
                state.rows[key] = nil
            }
        }
    }

    /// Replaces the database with a new, empty one: every record is gone and changes are numbered
    /// from the start again, so that a store that saw later numbers catches up in full.
    public func eraseAll() {
        state.withLock { state in
            state.rows = [:]
            state.latestNumber = 0
        }
    }

    // MARK: For the stores

    func makeStoreID() -> Int {
        state.withLock { state in
            defer { state.nextStoreID += 1 }
            return state.nextStoreID
        }
    }

    /// Registers a store's connection; from now on it is delivered every change stored. Its first
    /// connection takes the latest change number as its position, as the library catches up in
    /// full after it.
    func connect(store id: Int, _ connection: Connection) {
        state.withLock { state in
            state.connections[id]?.deliveries.finish()
            state.connections[id] = connection
            if state.positions[id] == nil {
                state.positions[id] = state.latestNumber
            }
        }
    }

    /// Ends a store's connection (of `generation`, or any when `nil`); deliveries not reported yet
    /// are dropped, and the store's position stays where they left it.
    func disconnect(store id: Int, generation: Int? = nil) {
        state.withLock { state in
            guard let connection = state.connections[id],
                generation.map({ $0 == connection.generation }) ?? true
            else { return }
            connection.deliveries.finish()
            state.connections[id] = nil
        }
    }

    /// Whether the store's connection of `generation` is still the one registered.
    func isConnected(store id: Int, generation: Int? = nil) -> Bool {
        state.withLock { state in
            guard let connection = state.connections[id] else { return false }
            return generation.map { $0 == connection.generation } ?? true
        }
    }

    /// The store has reported every change up to `number`.
    func advance(store id: Int, to number: Int) {
        state.withLock { state in
            state.positions[id] = max(state.positions[id] ?? number, number)
        }
    }

    /// Stores each record unless refused or the server holds a later one, delivers what it stored,
    /// and returns the refused keys with their reasons.
    func push(_ records: [SyncRecord], from id: Int) -> [String: String] {
        state.withLock { state in
            state.pushCount += 1
            var refused: [String: String] = [:]
            var stored: [SyncRecord] = []
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            for record in records {
                if let reason = state.refusedKeys[record.key] {
                    refused[record.key] = reason
                    continue
                }
                if let held = state.rows[record.key], !record.timestamp.replaces(held.record.timestamp, now: now) {
                    continue
                }
                state.latestNumber += 1
                state.rows[record.key] = Row(record: record, number: state.latestNumber)
                stored.append(record)
            }
            if !stored.isEmpty {
                for (other, connection) in state.connections {
                    connection.deliveries.yield(
                        other == id
                            ? .ownChanges(through: state.latestNumber)
                            : .records(stored, through: state.latestNumber))
                }
            }
            return refused
        }
    }

    /// Every record's timestamp, by key.
    func timestamps() -> [String: SyncTimestamp] {
        state.withLock { $0.rows.mapValues(\.record.timestamp) }
    }

    /// The records of `keys` the server holds.
    func records(forKeys keys: [String]) -> [SyncRecord] {
        state.withLock { state in keys.compactMap { state.rows[$0]?.record } }
    }

    /// The changes after the store's position, in the order they were stored, moving the position
    /// to the latest; `nil` when the store has no position yet, or when the numbers went back
    /// below it (the server's records were replaced by an older or new database), as PostgreSQL's
    /// store answers.
    func changesSincePosition(of id: Int) -> [SyncRecord]? {
        state.withLock { state in
            guard let position = state.positions[id] else { return nil }
            guard state.latestNumber >= position else {
                state.positions[id] = state.latestNumber
                return nil
            }
            state.positions[id] = state.latestNumber
            return state.rows.values.filter { $0.number > position }.sorted { $0.number < $1.number }.map(\.record)
        }
    }
}
