import Defaults
import Foundation
import Testing

/// The kinds of suite that every storage test runs against.
enum SuiteKind: String, CaseIterable, CustomTestStringConvertible {
    case inMemory
    case userDefaults

    var testDescription: String { rawValue }

    /// A fresh, empty suite of this kind with a name no other test uses.
    func make() -> any DefaultsSuite {
        let name = "swift-defaults-tests-\(UUID().uuidString)"
        switch self {
        case .inMemory:
            return InMemorySuite(name: name)
        case .userDefaults:
            // The suite's file (if any is written) is removed when the test process exits.
            TemporarySuites.remember(name)
            return UserDefaultsSuite.named(name)!
        }
    }
}

/// Names of `UserDefaults` suites the tests created, removed at exit so no file is left behind.
enum TemporarySuites {
    nonisolated(unsafe) private static var names: [String] = []
    private static let lock = NSLock()
    private static let cleanup: Void = {
        atexit {
            // Write what is pending first, so that nothing recreates the files afterwards.
            try? Defaults.flushAll()
            TemporarySuites.lock.lock()
            defer { TemporarySuites.lock.unlock() }
            for name in TemporarySuites.names {
                UserDefaults.standard.removePersistentDomain(forName: name)
                UserDefaults(suiteName: name)?.synchronize()
                // Foundation on Linux keeps the emptied file.
                try? FileManager.default.removeItem(at: FileSuite.fileURL(forName: name))
            }
        }
    }()

    static func remember(_ name: String) {
        _ = cleanup
        lock.withLock { names.append(name) }
    }
}
