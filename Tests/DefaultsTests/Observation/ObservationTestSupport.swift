import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// Every observation test, grouped so that `--filter Observation` selects them.
@Suite("Observation", .mayBlock)
enum ObservationTests {}

/// The suites every observation test runs on: those of ``SuiteKind`` and the file-backed suite.
enum ObservedSuiteKind: String, CaseIterable, CustomTestStringConvertible {
    case inMemory
    case userDefaults
    case file

    var testDescription: String { rawValue }

    /// A fresh, empty suite of this kind with a name no other test uses.
    func make() -> any DefaultsSuite {
        switch self {
        case .inMemory: SuiteKind.inMemory.make()
        case .userDefaults: SuiteKind.userDefaults.make()
        case .file:
            FileSuite(
                name: "swift-defaults-tests-\(UUID().uuidString)",
                directory: ObservationFiles.directory,
                arguments: []
            )
        }
    }
}

/// The directory of this process's file-backed test suites: `<tmp>/swift-defaults-observation-tests/<pid>`.
///
/// Removed at exit; a suite's background write or file watcher may still recreate a file while the
/// process exits, so directories left by processes that are gone are removed at the next start.
enum ObservationFiles {
    static let directory: URL = {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-defaults-observation-tests", isDirectory: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
            if let pid = Int32(name), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
            }
        }
        atexit {
            // Write what is pending first, so that as little as possible recreates files afterwards.
            try? Defaults.flushAll()
            try? FileManager.default.removeItem(at: ObservationFiles.directory)
        }
        return root.appendingPathComponent("\(getpid())", isDirectory: true)
    }()
}

/// Collects what an observer was told, from any thread.
final class ObservationRecorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    func append(_ value: Value) {
        storage.withLock { $0.append(value) }
    }

    var values: [Value] {
        storage.withLock { $0 }
    }

    var count: Int {
        storage.withLock { $0.count }
    }

    /// Waits until at least `count` values arrived.
    func wait(count: Int, fileID: String = #fileID, line: Int = #line) async throws {
        try await waitUntil("\(count) values, not \(values)", fileID: fileID, line: line) { self.count >= count }
    }
}

/// Iterates `updates` in a task of its own, recording each element, as an app would.
func recordUpdates<Element: Sendable>(_ updates: Defaults.Updates<Element>, into recorder: ObservationRecorder<Element>)
    -> Task<Void, Never>
{
    Task {
        for await element in updates {
            recorder.append(element)
        }
    }
}

/// An object to tie observations to.
final class LifetimeOwner: Sendable {}

/// Every way a value can change, each applied to a key in its own suite.
enum ChangePath: String, CaseIterable, CustomTestStringConvertible {
    case defaultsSubscript
    case suiteSubscript
    case keyReset
    case resetKeys
    case resetKeyArray
    case resetNames
    case removeAll

    var testDescription: String { rawValue }

    /// Whether the path sets a value (`true`) or returns the key to its default (`false`).
    var setsValue: Bool {
        self == .defaultsSubscript || self == .suiteSubscript
    }

    /// Applies the path: sets `value`, or resets the key.
    func apply<Value: Defaults.Serializable>(to key: Defaults.Key<Value>, value: Value) {
        switch self {
        case .defaultsSubscript: Defaults[key] = value
        case .suiteSubscript: key.suite[key] = value
        case .keyReset: key.reset()
        case .resetKeys: Defaults.reset(key)
        case .resetKeyArray: Defaults.reset([key])
        case .resetNames: Defaults.reset(key.name, suite: key.suite)
        case .removeAll: Defaults.removeAll(suite: key.suite)
        }
    }
}

/// A value that is not `Sendable`, to show observation does not need it to be.
final class ObservedNote: NSObject, NSSecureCoding, Defaults.Serializable {
    static var supportsSecureCoding: Bool { true }
    var text: String

    init(_ text: String) { self.text = text }

    required init?(coder: NSCoder) {
        guard let text = coder.decodeObject(of: NSString.self, forKey: "text") else { return nil }
        self.text = text as String
    }

    func encode(with coder: NSCoder) { coder.encode(text as NSString, forKey: "text") }
}

/// A unique key name, so that keys of one test never meet another's.
func uniqueKeyName(_ prefix: String = "key") -> String {
    "\(prefix)\(UUID().uuidString.prefix(8))"
}
