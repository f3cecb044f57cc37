import BenchmarkFixtures
@_spi(Testing) import Defaults
import Foundation
import Synchronization

// Observation's costs: a write with 0, 1 and 1,000 observers on its key, and P6, the time from a
// write in one process to an observer in another seeing it.

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of the machine.
func monotonicNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

/// The writer of P6, run as a child process: writes its clock to `sentAt` and flushes, `count`
/// times, pausing between writes so that each is seen on its own.
func runLatencyWriter(directory: URL, count: Int) throws {
    let suite = FileSuite(name: "latency", directory: directory, arguments: [])
    for index in 0..<count {
        suite.set(index, forKey: "index")
        suite.set(monotonicNanoseconds(), forKey: "sentAt")
        try suite.flush()
        usleep(20_000)
    }
}

/// The median cost of `Defaults[key] = value` with `observerCount` observers on the key.
func writeCost(observers observerCount: Int) -> Duration {
    let suite = InMemorySuite()
    let key = Defaults.Key<Int>("observed", default: 0, suite: suite)
    let observations = (0..<observerCount).map { _ in Defaults.observe(key, options: []) { _ in } }
    defer { observations.forEach { $0.invalidate() } }
    return measure(iterations: observerCount >= 1_000 ? 2_000 : 100_000) { index in Defaults[key] = index }
}

/// Latencies in nanoseconds of `count` changes written by a child process, as seen by an observer here.
func crossProcessLatencies(directory: URL, count: Int) throws -> [Int] {
    let suite = FileSuite(name: "latency", directory: directory, arguments: [])
    let key = Defaults.Key<Int>("sentAt", default: 0, suite: suite)
    let latencies = Mutex<[Int]>([])
    let observation = Defaults.observe(key, options: []) { change in
        let now = monotonicNanoseconds()
        latencies.withLock { $0.append(now - change.newValue) }
    }
    defer { observation.invalidate() }
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = ["--latency-writer", directory.path, "\(count)"]
    try child.run()
    child.waitUntilExit()
    // Give the watcher time to deliver the last change.
    for _ in 0..<100 where latencies.withLock({ $0.count }) < count {
        usleep(10_000)
    }
    return latencies.withLock { $0 }
}

func percentile(_ values: [Int], _ fraction: Double) -> Int {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return -1 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}
