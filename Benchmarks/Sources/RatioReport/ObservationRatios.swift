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
/// times, pausing between writes so that each is seen on its own. Prints how long each flush took
/// (nanoseconds, a line each): the share of the latency that is the writer's durable write.
func runLatencyWriter(directory: URL, count: Int) throws {
    let suite = FileSuite(name: "latency", directory: directory, arguments: [])
    var flushTimes: [Int] = []
    for index in 0..<count {
        suite.set(index, forKey: "index")
        let sentAt = monotonicNanoseconds()
        suite.set(sentAt, forKey: "sentAt")
        try suite.flush()
        flushTimes.append(monotonicNanoseconds() - sentAt)
        usleep(20_000)
    }
    print(flushTimes.map(String.init).joined(separator: "\n"))
}

/// Another writer for P6, to measure the reader's share alone: it replaces the file by a rename
/// as the library does, but without `fsync` (so not durably), taking its clock just before it
/// writes. What an observer then measures is the rename → inotify → read → decode → observer path.
func runRenamingWriter(directory: URL, count: Int) throws {
    let path = directory.appendingPathComponent("latency.plist").path
    let temporaryPath = directory.appendingPathComponent(".latency.plist.renaming").path
    for index in 0..<count {
        let sentAt = monotonicNanoseconds()
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>index</key>
            \t<integer>\(index)</integer>
            \t<key>sentAt</key>
            \t<integer>\(sentAt)</integer>
            </dict>
            </plist>

            """
        // Not `Data.write`, which `fsync`s.
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let bytes = Array(xml.utf8)
        guard fd >= 0, write(fd, bytes, bytes.count) == bytes.count, close(fd) == 0,
            rename(temporaryPath, path) == 0
        else { throw CocoaError(.fileWriteUnknown) }
        usleep(20_000)
    }
}

/// The median cost of `Defaults[key] = value` with `observerCount` observers on the key.
func writeCost(observers observerCount: Int) -> Duration {
    let suite = InMemorySuite()
    let key = Defaults.Key<Int>("observed", default: 0, suite: suite)
    let observations = (0..<observerCount).map { _ in Defaults.observe(key, options: []) { _ in } }
    defer { for observation in observations { observation.invalidate() } }
    return measure(iterations: observerCount >= 1_000 ? 2_000 : 100_000) { index in Defaults[key] = index }
}

/// Latencies in nanoseconds of `count` changes written by a child process, as seen by an observer
/// here, and the times the writer's flushes took.
///
/// With `durably` false the child replaces the file without `fsync` (`runRenamingWriter`), so
/// that the latencies are the reader's share alone.
func crossProcessLatencies(directory: URL, count: Int, durably: Bool = true) throws -> (
    seen: [Int], flushes: [Int]
) {
    let directory = directory.appendingPathComponent(durably ? "durable" : "renaming", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
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
    child.arguments = [durably ? "--latency-writer" : "--renaming-writer", directory.path, "\(count)"]
    let pipe = Pipe()
    child.standardOutput = pipe
    try child.run()
    let flushes = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        .split(separator: "\n").compactMap { Int($0) }
    child.waitUntilExit()
    // Give the watcher time to deliver the last change.
    for _ in 0..<100 where latencies.withLock({ $0.count }) < count {
        usleep(10_000)
    }
    return (latencies.withLock { $0 }, flushes)
}

func percentile(_ values: [Int], _ fraction: Double) -> Int {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return -1 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}

/// p50, p99 and max of nanosecond figures, for a line of the report.
func describeLatencies(_ values: [Int]) -> String {
    "p50 \(format(.nanoseconds(percentile(values, 0.5)))), p99 \(format(.nanoseconds(percentile(values, 0.99)))), "
        + "max \(format(.nanoseconds(values.max() ?? -1)))"
}
