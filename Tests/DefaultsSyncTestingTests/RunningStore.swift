import Defaults
import Foundation
import Synchronization
import TestSupport

/// A store running as the library runs one: its events collected in order, until `stop()` (not
/// when the last reference goes: a test that drops it keeps its device connected).
final class RunningStore: Sendable {
    enum Event: Sendable, Equatable {
        case connected
        case received([SyncRecord])
        case disconnected(String)
    }

    /// The events, apart from the store so that its task does not keep this alive.
    private final class Log: Sendable {
        let events = Mutex<[Event]>([])

        func record(_ event: SyncEvent) {
            events.withLock { events in
                switch event {
                case .connected: events.append(.connected)
                case .received(let records): events.append(.received(records))
                case .disconnected(let error): events.append(.disconnected("\(error)"))
                }
            }
        }
    }

    let store: any DefaultsSyncStore
    private let log = Log()
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ store: any DefaultsSyncStore) {
        self.store = store
        let started = Task.detached { [log] in
            await store.run { event in log.record(event) }
        }
        task.withLock { $0 = started }
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }

    var all: [Event] { log.events.withLock { $0 } }

    /// Every record received so far, in order.
    var received: [SyncRecord] {
        all.flatMap { event -> [SyncRecord] in
            if case .received(let records) = event { return records }
            return []
        }
    }

    var connections: Int { all.filter { $0 == .connected }.count }

    var disconnections: [String] {
        all.compactMap { event in
            if case .disconnected(let reason) = event { return reason }
            return nil
        }
    }

    /// Waits until `condition` holds of the events.
    func waitUntil(
        _ what: String, fileID: String = #fileID, line: Int = #line, _ condition: @escaping ([Event]) -> Bool
    ) async throws {
        try await TestSupport.waitUntil("\(what); events: \(all)", fileID: fileID, line: line) {
            condition(self.all)
        }
    }

    func waitUntilConnected(times count: Int = 1, fileID: String = #fileID, line: Int = #line) async throws {
        try await waitUntil("\(count) connection(s)", fileID: fileID, line: line) { events in
            events.filter { $0 == .connected }.count >= count
        }
    }
}

/// A record of `key` holding `text` (not a property list: the in-memory store moves any bytes).
func record(_ key: String, _ text: String?, at wallTime: Int64, counter: Int64 = 0, origin: String = "a") -> SyncRecord
{
    SyncRecord(
        key: key, value: text.map { Data($0.utf8) },
        timestamp: SyncTimestamp(wallTime: wallTime, counter: counter, origin: origin))
}
