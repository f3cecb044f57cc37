import Foundation
import Metrics
import Synchronization

/// The server's metrics, through swift-metrics (the command exports them at `/metrics` on the
/// metrics listener, for Prometheus): connections, messages, refusals, devices closed as slow
/// consumers and refused as they connected again too soon, requests refused past their user's
/// share of the database, connections waiting their turn to arrive, and the lag from a commit to
/// its fan-out. The heap is read at each scrape (``ProcessHeap``).
final class ServerMetrics: Sendable {
    private let connectionCount = Atomic<Int>(0)
    private let connections = Gauge(label: "defaults_sync_connections")
    private let accepted = Counter(label: "defaults_sync_connections_total")
    private let unauthorized = Counter(label: "defaults_sync_unauthorized_total")
    private let refusedRecords = Counter(label: "defaults_sync_refused_records_total")
    private let rateLimited = Counter(label: "defaults_sync_rate_limited_total")
    private let slowConsumers = Counter(label: "defaults_sync_slow_consumers_total")
    private let reconnectionsRefused = Counter(label: "defaults_sync_reconnections_refused_total")
    private let shareRefusals = Counter(label: "defaults_sync_database_share_refused_total")
    private let broadcastRecords = Counter(label: "defaults_sync_broadcast_records_total")
    private let lag = Metrics.Timer(label: "defaults_sync_fanout_lag")
    private let messageCounters: [String: Counter] = Dictionary(
        uniqueKeysWithValues: ["stamps", "records", "changes", "push", "malformed"].map {
            ($0, Counter(label: "defaults_sync_messages_total", dimensions: [("kind", $0)]))
        })

    private let waitingArrivalCount = Atomic<Int>(0)
    private let waitingArrivals = Gauge(label: "defaults_sync_arrivals_waiting")

    var currentConnections: Int { connectionCount.load(ordering: .relaxed) }
    /// What `defaults_sync_arrivals_waiting` reads now.
    var currentArrivalsWaiting: Int { waitingArrivalCount.load(ordering: .relaxed) }

    /// Connections waiting their turn to arrive (``ArrivalGate``), over every loop.
    func arrivalsWaiting(changedBy delta: Int) {
        waitingArrivals.record(waitingArrivalCount.add(delta, ordering: .relaxed).newValue)
    }

    func connected() {
        accepted.increment()
        connections.record(connectionCount.add(1, ordering: .relaxed).newValue)
    }

    func disconnected() {
        connections.record(connectionCount.subtract(1, ordering: .relaxed).newValue)
    }

    func refusedToken() { unauthorized.increment() }
    func limited() { rateLimited.increment() }
    func slowConsumer() { slowConsumers.increment() }
    func refusedReconnection() { reconnectionsRefused.increment() }
    func refusedPastShare() { shareRefusals.increment() }
    func refused(_ count: Int) { refusedRecords.increment(by: count) }
    func message(_ kind: String) { messageCounters[kind]?.increment() }

    /// Records sent to a group's devices, committed at `committed` (ms since 1970) when known.
    func broadcast(records: Int, committedAt committed: Int64?) {
        broadcastRecords.increment(by: records)
        if let committed {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            lag.recordMilliseconds(max(0, now - committed))
        }
    }
}
