// P8: syncing through PostgreSQL, between real processes on this machine.
//
//   swift run -c release SyncLatency
//
// - Latency: a write in process A, seen by a `Defaults.observe` handler in process B; p50 and
//   p99 over 500 changes (after 20 warm-up ones), one change at a time. Target: p99 <= 50 ms.
// - Convergence: 4 processes write 1,000 keys each at once; the time until every process holds
//   all 4,000 values, and how many were lost (none expected).
// - P10: the same, with every key declared after connecting, one at a time (as lazily
//   initialized `static let` keys are), against the floor: the same 4,000 upserts sent by one
//   connection in batches of 500. Target: <= 5x the floor.
//
// Uses the server in $DEFAULTS_SYNC_URL, or starts a throwaway one with
// ../Tests/postgres-cluster.sh (Debian's postgresql package). Each process has its own
// XDG_CONFIG_HOME; this binary runs itself as the children (`--child ROLE`).
import Defaults
import DefaultsPostgres
import Foundation

if CommandLine.arguments.count > 2, CommandLine.arguments[1] == "--child" {
    await Child.run(role: CommandLine.arguments[2], arguments: Array(CommandLine.arguments.dropFirst(3)))
    exit(0)
}

let namespace = "p8-\(UUID().uuidString.prefix(8))"
let (url, cluster) = try Cluster.urlOrStart()
defer { cluster.map(Cluster.destroy) }

// Latency.
let observer = try Peer(role: "observer", url: url, namespace: namespace)
let writer = try Peer(role: "writer", url: url, namespace: namespace)
_ = try observer.next { $0 == "ready" }
_ = try writer.next { $0 == "ready" }
var latencies: [Double] = []
for index in 0..<520 {
    writer.send("w \(index)")
    let seen = try observer.next { $0.hasPrefix("seen \(index) ") }
    if index >= 20, let nanoseconds = Double(seen.split(separator: " ")[2]) {
        latencies.append(nanoseconds / 1e6)
    }
}
writer.send("quit")
observer.send("quit")
let sorted = latencies.sorted()
let p50 = sorted[sorted.count / 2]
let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
print(
    "P8 latency (A writes, B's observer sees it), \(sorted.count) changes: "
        + String(format: "p50 %.2f ms, p99 %.2f ms, max %.2f ms", p50, p99, sorted.last ?? 0)
        + " (target p99 <= 50 ms: \(p99 <= 50 ? "met" : "NOT met"))")
fflush(nil)  // every stream: the figures must not wait in a buffer

/// Starts `writers` children of `role`, tells them to go together, and returns the time until
/// every one of them holds every value, and how many values were missing.
func convergence(role: String, namespace: String, writers: Int, writesEach: Int) throws -> (
    seconds: Double, lost: Int
) {
    let peers = try (0..<writers).map { index in
        try Peer(role: role, url: url, namespace: namespace, arguments: ["\(index)", "\(writers)", "\(writesEach)"])
    }
    for peer in peers {
        _ = try peer.next(timeout: 300) { $0 == "ready" }
    }
    let start = Date()
    for peer in peers {
        peer.send("go")
    }
    var lost = 0
    var converged = start
    for peer in peers {
        let line = try peer.next(timeout: 900) { $0.hasPrefix("converged ") || $0.hasPrefix("lost ") }
        let parts = line.split(separator: " ")
        if parts[0] == "lost" {
            lost += Int(parts[1]) ?? 0
        } else if let seconds = Double(parts[1]) {
            converged = max(converged, Date(timeIntervalSince1970: seconds))
        }
        peer.send("quit")
    }
    return (converged.timeIntervalSince(start), lost)
}

// Convergence.
let writers = 4
let writesEach = 1000
let bulk = try convergence(role: "bulk", namespace: namespace + "-bulk", writers: writers, writesEach: writesEach)
print(
    "P8 convergence, \(writers) writers x \(writesEach) writes: all \(writers * writesEach) values everywhere after "
        + String(format: "%.2f s", bulk.seconds) + "; lost: \(bulk.lost)")
fflush(nil)

// P10: keys declared after connecting.
let lazy = try convergence(role: "lazy-bulk", namespace: namespace + "-lazy", writers: writers, writesEach: writesEach)
let floorPeer = try Peer(
    role: "floor", url: url, namespace: namespace + "-floor", arguments: ["\(writers)", "\(writesEach)"])
let floorLine = try floorPeer.next(timeout: 300) { $0.hasPrefix("floor ") || $0.hasPrefix("error") }
let floorSeconds = Double(floorLine.split(separator: " ").last ?? "") ?? .nan
let p10 = lazy.seconds / floorSeconds
print(
    "P10 \(writers) machines x \(writesEach) writes, keys declared after connecting: all values everywhere after "
        + String(
            format: "%.2f s vs the floor's %.2f s (one connection, batches of 500): %.1fx", lazy.seconds, floorSeconds,
            p10)
        + "; lost: \(lazy.lost) (target <= 5x: \(lazy.lost == 0 && p10 <= 5 ? "met" : "NOT met"))")
