// P18: `defaults edit`'s page in headless Chromium. A domain of 1,000 keys is opened ten times
// (from the start of navigation to every key shown, the page's own `keys-shown` mark), then 200
// changes are written by this process, one at a time, each timed from its durable write to the
// open page showing it. Beside them, the floor: the server's answer to `api/domain` alone.
//
//     swift build -c release --product defaults-edit-server   # the server, from this package
//     swift run -c release EditorLatency
//
// Needs Debian's chromium, chromium-driver and python3-selenium; the driver is
// ../Tests/Browser/editor-driver.py, as the tests use it.
import Defaults
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

let benchmarks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let driverScript = benchmarks.deletingLastPathComponent().appendingPathComponent("Tests/Browser/editor-driver.py").path
let server =
    ProcessInfo.processInfo.environment["DEFAULTS_EDIT_SERVER"]
    ?? benchmarks.appendingPathComponent(".build/release/defaults-edit-server").path

guard FileManager.default.isExecutableFile(atPath: server) else {
    print("P18: \(server) is not built: swift build -c release --product defaults-edit-server")
    exit(1)
}
// The tests' own check: Chromium, its driver and Selenium all here.
let check = Process()
check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
check.arguments = [driverScript, "--check"]
if (try? check.run()) == nil
    || {
        check.waitUntilExit()
        return check.terminationStatus != 0
    }()
{
    print("P18: not measured: needs Debian's chromium, chromium-driver and python3-selenium")
    exit(0)
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p18-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let domain = "com.example.p18"
let suite = FileSuite(name: domain, directory: directory, arguments: [])
for index in 0..<1000 {
    suite.set(index, forKey: "group\(index / 50).key\(index)")
}
try suite.flush()

/// A child process with its standard output read line by line.
final class Child {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer = Data()

    init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { return nil }
            buffer.append(data)
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

let editor = try Child(server, ["--no-open", "--", domain], environment: ["XDG_CONFIG_HOME": directory.path])
var driver: Child?

/// Ends the run on every path: the browser and the server stopped, the domain removed.
@MainActor
func finish(_ status: Int32, _ message: String? = nil) -> Never {
    if let message {
        print("P18: \(message)")
    }
    driver?.send(#"{"do": "quit"}"#)
    driver?.process.waitUntilExit()
    editor.stop()
    try? FileManager.default.removeItem(at: directory)
    exit(status)
}

guard let started = editor.readLine(), let address = started.split(separator: " ").last.map(String.init) else {
    finish(1, "the server did not start")
}
driver = try Child("/usr/bin/python3", [driverScript], environment: [:])

@MainActor
func ask(_ command: [String: Any]) -> [String: Any] {
    let data = try! JSONSerialization.data(withJSONObject: command)
    driver?.send(String(decoding: data, as: UTF8.self))
    guard let line = driver?.readLine(),
        let answer = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        answer["ok"] as? Bool == true
    else {
        finish(1, "the driver failed at \(command["do"] ?? "?")")
    }
    return answer
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

func format(_ milliseconds: Double) -> String { String(format: "%.1f ms", milliseconds) }

// The floor: the server's answer alone (URLSession may keep its connection between them).
var floor: [Double] = []
let domainURL = URL(string: address + "api/domain")!
for _ in 0..<10 {
    let start = ContinuousClock.now
    let semaphore = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: domainURL) { _, _, _ in semaphore.signal() }.resume()
    semaphore.wait()
    floor.append(Double((ContinuousClock.now - start) / .microseconds(1)) / 1000)
}

// Warm-up, then ten loads.
_ = ask(["do": "open", "url": address])
var loads: [Double] = []
for _ in 0..<10 {
    let opened = ask(["do": "open", "url": address])
    guard opened["rows"] as? Int == 1000 else {
        finish(1, "the page showed \(opened["rows"] ?? "?") keys, not 1,000")
    }
    loads.append(opened["ms"] as? Double ?? .infinity)
}

// 200 changes by this process, each timed from just before its write (the write and its fsync
// included) to the page showing it.
var changes: [Double] = []
for round in 0..<220 {
    let key = "group\(round % 20).key\(round % 20 * 50 + round / 20)"
    let value = 100_000 + round
    let start = ContinuousClock.now
    suite.set(value, forKey: key)
    do {
        try suite.flush()
    } catch {
        finish(1, "the write failed: \(error)")
    }
    _ = ask(["do": "wait-value", "key": key, "value": String(value), "timeout": 30])
    if round >= 20 {
        changes.append(Double((ContinuousClock.now - start) / .microseconds(1)) / 1000)
    }
}

let loadMedian = percentile(loads, 0.5)
let changeP99 = percentile(changes, 0.99)
print(
    "P18 page of 1,000 keys ready: p50 \(format(loadMedian)), worst \(format(loads.max() ?? 0)) of 10 "
        + "(floor: api/domain answered in p50 \(format(percentile(floor, 0.5)))); target ≤ 300 ms: "
        + (loadMedian <= 300 ? "met" : "NOT met"))
print(
    "P18 change by another process shown: p50 \(format(percentile(changes, 0.5))), p99 \(format(changeP99)), "
        + "max \(format(changes.max() ?? 0)) of \(changes.count); target p99 ≤ 200 ms: "
        + (changeP99 <= 200 ? "met" : "NOT met"))
finish(0)
