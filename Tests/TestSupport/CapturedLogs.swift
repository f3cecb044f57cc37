import Foundation
import Logging
import Synchronization

/// What the library logs while the tests run, kept instead of printed: tests provoke failures on
/// purpose, and their expected error lines would bury the test run's own. Set
/// `SWIFT_DEFAULTS_TEST_LOGS=print` to print them as they come.
public enum CapturedLogs {
    /// The last lines logged, oldest first (at most ``limit``).
    public static var lines: [String] {
        entries.withLock { $0 }
    }

    /// How many lines are kept.
    public static let limit = 10_000

    static let entries = Mutex<[String]>([])
    static let isPrinting = ProcessInfo.processInfo.environment["SWIFT_DEFAULTS_TEST_LOGS"] == "print"

    /// Keeps a line a test wants to tell a curious reader (a count that depends on the machine),
    /// with the library's log: printed only with `SWIFT_DEFAULTS_TEST_LOGS=print`.
    public static func note(_ line: String) {
        append("note: \(line)")
    }

    static func append(_ line: String) {
        if isPrinting {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        entries.withLock { entries in
            entries.append(line)
            if entries.count > limit {
                entries.removeFirst(entries.count - limit)
            }
        }
    }
}

/// Records each message in ``CapturedLogs``.
struct CapturingLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        CapturedLogs.append("\(event.level) \(label): \(details.isEmpty ? "" : details + " ")\(event.message)")
    }
}

/// Called by `TestSupportStartup` as the test binary loads, before any test logs.
@_cdecl("swift_defaults_tests_capture_logs")
public func captureLogsBeforeAnyTest() {
    LoggingSystem.bootstrap { CapturingLogHandler(label: $0) }
}
