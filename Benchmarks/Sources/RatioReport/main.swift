// Measures each performance target (README.md) against its baseline in one run and prints the
// ratios: `swift run -c release RatioReport`. (package-benchmark's `swift package benchmark`
// gives the full distributions; this gives the ratios the targets are stated in.)
import BenchmarkFixtures
@_spi(Testing) import Defaults
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Sinks results so the optimizer keeps the work.
nonisolated(unsafe) var sink = 0

@inline(never)
func consume<T>(_ value: T) {
    withUnsafeBytes(of: value) { sink &+= Int($0.first ?? 0) }
}

/// The median time of one operation: `repeats` samples of `iterations` operations each.
func measure(iterations: Int, repeats: Int = 15, _ body: (Int) throws -> Void) rethrows -> Duration {
    var samples: [Duration] = []
    try body(0)  // warm-up
    for _ in 0..<repeats {
        let start = ContinuousClock.now
        for index in 0..<iterations {
            try body(index)
        }
        samples.append((ContinuousClock.now - start) / iterations)
    }
    return samples.sorted()[samples.count / 2]
}

/// Each of `count` operations timed on its own, sorted: for operations that wait on the disk,
/// whose slowest few (another program's I/O queued before theirs) would otherwise weigh on every
/// sample they fall into.
func measureEach(_ count: Int, _ body: (Int) throws -> Void) rethrows -> [Duration] {
    try body(0)  // warm-up
    var samples: [Duration] = []
    for index in 1...count {
        let start = ContinuousClock.now
        try body(index)
        samples.append(ContinuousClock.now - start)
    }
    return samples.sorted()
}

/// The median times of two operations measured in alternation, so that a busy moment of the
/// machine weighs on both alike: for ratios between two fast operations.
func measurePair(iterations: Int, repeats: Int = 31, _ first: () -> Void, _ second: () -> Void) -> (
    Duration, Duration
) {
    var firstSamples: [Duration] = []
    var secondSamples: [Duration] = []
    first()
    second()
    for _ in 0..<repeats {
        var start = ContinuousClock.now
        for _ in 0..<iterations { first() }
        firstSamples.append((ContinuousClock.now - start) / iterations)
        start = ContinuousClock.now
        for _ in 0..<iterations { second() }
        secondSamples.append((ContinuousClock.now - start) / iterations)
    }
    return (firstSamples.sorted()[repeats / 2], secondSamples.sorted()[repeats / 2])
}

func format(_ duration: Duration) -> String {
    let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
    if nanoseconds >= 1e6 { return String(format: "%.2f ms", nanoseconds / 1e6) }
    if nanoseconds >= 1e3 { return String(format: "%.2f µs", nanoseconds / 1e3) }
    return String(format: "%.1f ns", nanoseconds)
}

func ratio(_ lhs: Duration, _ rhs: Duration) -> Double {
    lhs / rhs
}

var rows: [(String, String, String, String, String)] = []
/// Records a measurement; `met` is `nil` for one that has no target, only a figure to report.
@MainActor func row(_ target: String, _ ours: String, _ baseline: String, _ result: String, _ met: Bool?) {
    let verdict = met.map { $0 ? "met" : "NOT met" } ?? "no target"
    rows.append((target, ours, baseline, result, verdict))
    print("\(target): ours \(ours), baseline \(baseline): \(result) (\(verdict))")
}

// MARK: P7 runs in a fresh child process, so that nothing else is resident.

// P13's children: a process reading one key, with the library or with Foundation.
runStandardReadChildIfAsked()

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "--memory-child" {
    let url = URL(fileURLWithPath: arguments[2])
    // Run the code first, writing and loading a file of 1,000 keys of the same mix, so that the
    // pages of code first run by the load are not counted as its memory. Both warm suites stay
    // alive until the end, so that the memory they hold is not reused by the load measured.
    let warmDirectory = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: warmDirectory, userDefaultsSuites: [])
    guard let warm = try? Fixtures.keySuite(count: 1_000, in: warmDirectory, name: "warm") else { exit(1) }
    let warmLoaded = FileSuite(fileURL: warm.fileURL, arguments: [])
    consume(warmLoaded.object(forKey: "setting-1") as? String)
    // Memory the warm-up freed goes back to the system, so that the load cannot reuse it unseen.
    #if canImport(Glibc)
    // `malloc_trim` (glibc's malloc.h, which the Glibc module does not import).
    if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    #endif
    let before = Fixtures.residentBytes()
    let anonymousBefore = Fixtures.anonymousResidentBytes()
    let suite = FileSuite(fileURL: url, arguments: [])
    let after = Fixtures.residentBytes()
    let anonymousAfter = Fixtures.anonymousResidentBytes()
    consume(suite.object(forKey: "setting-1") as? String)
    // All resident memory the load added, then the anonymous part (the heap: values, tables).
    print(after - before, anonymousAfter - anonymousBefore)
    withExtendedLifetime((warm, warmLoaded)) {}
    exit(0)
}

// For profiling one path alone (`perf record -g .build/release/RatioReport --observers`).
if arguments.count == 2, arguments[1] == "--process-start" {  // P13 alone
    measureStandardReadProcess()
    exit(0)
}
if arguments.count == 2, arguments[1] == "--schema-listing" {  // P15 alone
    measureSchemaListing()
    exit(0)
}
if arguments.count == 2, arguments[1] == "--observers" {  // P6: a change seen by 1,000 observers
    print(format(writeCost(observers: 1_000)))
    exit(0)
}
if arguments.count == 2, arguments[1] == "--writes" {  // P3: writes to a file suite
    let directory = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [])
    let suite = FileSuite(name: "writes", directory: directory, arguments: [])
    let key = Defaults.Key<Int>("intKey", default: 0, suite: suite)
    print(format(measure(iterations: 1_000_000, repeats: 5) { index in Defaults[key] = index }))
    exit(0)
}

if arguments.count == 2, arguments[1] == "--int-reads" {  // P1: reads of an unchanged Int
    let suite = InMemorySuite()
    let key = Defaults.Key<Int>("intKey", default: 0, suite: suite)
    Defaults[key] = 42
    print(format(measure(iterations: 2_000_000, repeats: 5) { _ in consume(Defaults[key]) }))
    exit(0)
}
if arguments.count == 2, arguments[1] == "--codable-reads" {  // P2: reads of an unchanged Codable struct
    struct Profile: Codable, Defaults.Serializable {
        var name: String
        var age: Int
        var tags: [String]
    }
    let suite = InMemorySuite()
    let key = Defaults.Key<Profile>("profile", default: Profile(name: "", age: 0, tags: []), suite: suite)
    Defaults[key] = Profile(name: "Ada", age: 36, tags: ["math", "engines"])
    print(format(measure(iterations: 2_000_000, repeats: 5) { _ in consume(Defaults[key].age) }))
    exit(0)
}
if arguments.count == 2, arguments[1] == "--flush" {  // P4: a flush of 10,000 keys after one change
    let directory = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [])
    let large = try Fixtures.tenThousandKeySuite(in: directory)
    let samples = try measureEach(251) { index in
        large.set(index, forKey: "changed")
        try large.flush()
    }
    print("median \(format(samples[samples.count / 2])), p90 \(format(samples[samples.count * 9 / 10]))")
    let size = (try? FileManager.default.attributesOfItem(atPath: large.fileURL.path)[.size] as? Int) ?? 0
    print("the durable replace alone:", durableWriteFloor(directory: directory, size: size, count: 251).description)
    exit(0)
}
if arguments.count == 2, arguments[1] == "--load" {  // P5: a cold load of the 10,000-key file
    let directory = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [])
    let url = try Fixtures.tenThousandKeySuite(in: directory).fileURL
    print(
        format(
            measure(iterations: 20, repeats: 5) { _ in
                consume(FileSuite(fileURL: url, arguments: []).object(forKey: "setting-1") as? String)
            }))
    exit(0)
}

if arguments.count == 2, arguments[1] == "--latency" {  // P6: another process's change, p50 and p99
    let directory = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [])
    let (latencies, flushes) = try crossProcessLatencies(directory: directory, count: 200)
    print("seen:", describeLatencies(latencies), "\(latencies.count)/200")
    print("of which the writer's flush:", describeLatencies(flushes))
    let (readerShare, _) = try crossProcessLatencies(directory: directory, count: 200, durably: false)
    print("the reader's share (rename → observer):", describeLatencies(readerShare), "\(readerShare.count)/200")
    exit(0)
}
if arguments.count == 4, arguments[1] == "--renaming-writer", let count = Int(arguments[3]) {
    try runRenamingWriter(directory: URL(fileURLWithPath: arguments[2]), count: count)
    exit(0)
}
if arguments.count == 4, arguments[1] == "--latency-writer", let count = Int(arguments[3]) {
    try runLatencyWriter(directory: URL(fileURLWithPath: arguments[2]), count: count)
    exit(0)
}

let directory = Fixtures.makeDirectory()
let smallName = Fixtures.userDefaultsSuiteName("small")
let largeName = Fixtures.userDefaultsSuiteName("large")
Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [smallName, largeName])

// MARK: P1 and P2

/// A `Codable` struct, stored as JSON as Defaults stores it.
struct Profile: Codable, Defaults.Serializable {
    var name: String
    var age: Int
    var tags: [String]
}

/// A `Codable` struct of plain values: a copy of it retains nothing.
struct Point: Codable, Defaults.Serializable {
    var x: Double
    var y: Double
}

let suite = FileSuite(name: "ratios", directory: directory, arguments: [])
let intKey = Defaults.Key<Int>("intKey", default: 0, suite: suite)
let profileKey = Defaults.Key<Profile>("profile", default: Profile(name: "", age: 0, tags: []), suite: suite)
Defaults[intKey] = 42
Defaults[profileKey] = Profile(name: "Ada", age: 36, tags: ["math", "engines"])
let pointKey = Defaults.Key<Point>("point", default: Point(x: 0, y: 0), suite: suite)
Defaults[pointKey] = Point(x: 3, y: 4)
let dictionary: [String: Any] = ["intKey": 42, "other": "x"]
guard let userDefaults = UserDefaults(suiteName: smallName) else {
    print("UserDefaults(suiteName:) refused the suite")
    exit(1)
}
userDefaults.set(42, forKey: "intKey")

let (p1, p1Dictionary) = measurePair(
    iterations: 100_000, { consume(Defaults[intKey]) }, { consume(dictionary["intKey"] as? Int) })
let p1UserDefaults = measure(iterations: 200_000) { _ in consume(userDefaults.integer(forKey: "intKey")) }
// The suite's own share of an uncached read: its lock, the lookup and the cast.
let p1Suite = measure(iterations: 200_000) { _ in consume(suite.object(forKey: "intKey") as? Int) }
let (p2, p2P1) = measurePair(iterations: 100_000, { consume(Defaults[profileKey].age) }, { consume(Defaults[intKey]) })
// The same read of a struct whose copy retains nothing: what P2 costs beyond it is the reference counting.
let (p2Plain, p2PlainP1) = measurePair(
    iterations: 100_000, { consume(Defaults[pointKey].x) }, { consume(Defaults[intKey]) })
row(
    "P1 read vs [String: Any] lookup + cast (≤ 1.0×)", format(p1), format(p1Dictionary),
    String(format: "%.2f×", ratio(p1, p1Dictionary)), ratio(p1, p1Dictionary) <= 1)
row(
    "— suite.object(forKey:) as? Int vs [String: Any] (an uncached read's share)", format(p1Suite),
    format(p1Dictionary), String(format: "%.2f×", ratio(p1Suite, p1Dictionary)), nil)
row(
    "— read vs UserDefaults.integer(forKey:)", format(p1), format(p1UserDefaults),
    String(format: "%.1f× faster", ratio(p1UserDefaults, p1)), nil)
row(
    "P2 Codable struct read vs P1 (≤ 1.5×)", format(p2), format(p2P1),
    String(format: "%.2f×", ratio(p2, p2P1)), ratio(p2, p2P1) <= 1.5)
row(
    "— Codable struct of two Doubles (nothing to retain) vs P1", format(p2Plain), format(p2PlainP1),
    String(format: "%.2f×", ratio(p2Plain, p2PlainP1)), nil)

// A key declared with a description and a range costs nothing per cached read or write: what it
// says is kept in `KeyRegistry`; only a read that is not cached checks the range (to tell of a
// stored value outside it), and a write is not checked against it.
let describedKey = Defaults.Key<Int>(
    "described", default: 12, suite: suite, description: "Text size, in points.", range: 8...72)
let plainKey = Defaults.Key<Int>("plain", default: 12, suite: suite)
Defaults[describedKey] = 14
Defaults[plainKey] = 14
let (describedRead, plainRead) = measurePair(
    iterations: 100_000, { consume(Defaults[describedKey]) }, { consume(Defaults[plainKey]) })
nonisolated(unsafe) var writtenValue = 0
let (describedWrite, plainWrite) = measurePair(
    iterations: 20_000,
    {
        writtenValue &+= 1
        Defaults[describedKey] = writtenValue
    },
    {
        writtenValue &+= 1
        Defaults[plainKey] = writtenValue
    })
row(
    "— a read of a key with a description and a range vs one without", format(describedRead), format(plainRead),
    String(format: "%.2f×", ratio(describedRead, plainRead)), nil)
row(
    "— a write of a key with a description and a range vs one without", format(describedWrite), format(plainWrite),
    String(format: "%.2f×", ratio(describedWrite, plainWrite)), nil)

// MARK: P3

let p3 = measure(iterations: 100_000) { index in Defaults[intKey] = index }
let p3UserDefaults = measure(iterations: 20_000) { index in userDefaults.set(index, forKey: "intKey") }
row(
    "P3 write vs UserDefaults.set (≤ 1/40)", format(p3), format(p3UserDefaults),
    String(format: "1/%.1f", ratio(p3UserDefaults, p3)), ratio(p3UserDefaults, p3) >= 40)

// MARK: P4

var writeCounts: [Int] = []
for round in 0..<5 {
    let coalesced = FileSuite(name: "coalesce\(round)", directory: directory, arguments: [])
    for index in 0..<10_000 {
        coalesced.set(index, forKey: "key\(index % 100)")
    }
    try coalesced.flush()
    writeCounts.append(coalesced.writeCount)
}
let maxWrites = writeCounts.max() ?? 0
row(
    "P4 10,000 writes over 100 keys + flush (1 file write)", "\(maxWrites) writes (max of 5 runs: \(writeCounts))",
    "-", "\(maxWrites)", maxWrites <= 1)

let large = try Fixtures.tenThousandKeySuite(in: directory)
guard let largeUserDefaults = Fixtures.tenThousandKeyUserDefaults(name: largeName) else {
    print("UserDefaults(suiteName:) refused the suite")
    exit(1)
}
// Medians of single operations, both sides alike: each waits on an fsync of the shared disk.
let p4Samples = try measureEach(101) { index in
    large.set(index, forKey: "changed")
    try large.flush()
}
let p4UserDefaultsSamples = measureEach(21) { index in
    largeUserDefaults.set(index, forKey: "changed")
    consume(largeUserDefaults.synchronize())
}
let p4 = p4Samples[p4Samples.count / 2]
let p4UserDefaults = p4UserDefaultsSamples[p4UserDefaultsSamples.count / 2]
row(
    "P4 flush of 10,000 keys after one change vs synchronize() (≥ 30× faster), medians",
    "\(format(p4)) (p90 \(format(p4Samples[p4Samples.count * 9 / 10])))",
    "\(format(p4UserDefaults)) (p90 \(format(p4UserDefaultsSamples[p4UserDefaultsSamples.count * 9 / 10])))",
    String(format: "%.1f× faster", ratio(p4UserDefaults, p4)), ratio(p4UserDefaults, p4) >= 30)

let floor = durableWriteFloor(
    directory: directory,
    size: (try FileManager.default.attributesOfItem(atPath: large.fileURL.path)[.size] as? Int) ?? 0, count: 101)
row(
    "— P4's floor: the system calls of a durable replace of a file that size, medians", floor.description, "-",
    String(format: "flush %.2f× the floor", ratio(p4, floor.total)), nil)

// MARK: P5

let fileURL = large.fileURL
let p5 = measure(iterations: 10) { _ in
    let loaded = FileSuite(fileURL: fileURL, arguments: [])
    consume(loaded.object(forKey: "setting-1") as? String)
}
let p5Foundation = measure(iterations: 5, repeats: 9) { _ in
    let data = (try? Data(contentsOf: fileURL)) ?? Data()
    consume((try? PropertyListSerialization.propertyList(from: data, format: nil)) != nil)
}
row(
    "P5 cold load vs PropertyListSerialization decode (≤ 1/15)", format(p5), format(p5Foundation),
    String(format: "1/%.1f", ratio(p5Foundation, p5)), ratio(p5Foundation, p5) >= 15)

// MARK: P7

let fileSize = (try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? Int) ?? 0
let child = Process()
child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
child.arguments = ["--memory-child", fileURL.path]
let pipe = Pipe()
child.standardOutput = pipe
try child.run()
let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
child.waitUntilExit()
let memoryFields = output.split(whereSeparator: \.isWhitespace).map { Int($0) ?? -1 }
let resident = memoryFields.first ?? -1
let anonymous = memoryFields.count > 1 ? memoryFields[1] : -1
let memoryRatio = Double(resident) / Double(max(fileSize, 1))
row(
    "P7 resident memory vs file size (≤ 2×)", "\(resident / 1024) KB (anonymous \(anonymous / 1024) KB)",
    "file \(fileSize / 1024) KB",
    String(format: "%.2f×", memoryRatio), resident >= 0 && memoryRatio <= 2)

// MARK: P9

measureCommandLineRead(fileURL: fileURL)

// MARK: P13

measureStandardReadProcess()

// MARK: P15

measureSchemaListing()

// MARK: Observation: a write's cost with observers, and P6

let unobserved = writeCost(observers: 0)
let oneObserver = writeCost(observers: 1)
row(
    "— write with 1 observer on the key vs with none", format(oneObserver), format(unobserved),
    String(format: "%.1f×", ratio(oneObserver, unobserved)), nil)
let thousandObservers = writeCost(observers: 1_000)
row(
    "P6 one change seen by 1,000 observers of one key, in all (≤ 100 µs)", format(thousandObservers),
    "write with none: \(format(unobserved))", format(thousandObservers), thousandObservers <= .microseconds(100))

let (latencies, writerFlushes) = try crossProcessLatencies(directory: directory, count: 200)
let p50 = Duration.nanoseconds(percentile(latencies, 0.5))
let p99 = Duration.nanoseconds(percentile(latencies, 0.99))
row(
    "P6 another process's change seen by an observer, p99 (≤ 5 ms)",
    "p50 \(format(p50)), p99 \(format(p99)), \(latencies.count)/200 seen", "Foundation: never",
    format(p99), latencies.count == 200 && p99 <= .milliseconds(5)
)
row(
    "— of which the writer's flush (write to flush returned)", describeLatencies(writerFlushes), "-", "-", nil)
let (readerShare, _) = try crossProcessLatencies(directory: directory, count: 200, durably: false)
row(
    "— the reader's share: a rename (no fsync) to the observer", describeLatencies(readerShare),
    "-", "\(readerShare.count)/200 seen", nil)

print("")
print("| target | ours | baseline | ratio | |")
print("|---|---|---|---|---|")
for (target, ours, baseline, result, met) in rows {
    print("| \(target) | \(ours) | \(baseline) | \(result) | \(met) |")
}
