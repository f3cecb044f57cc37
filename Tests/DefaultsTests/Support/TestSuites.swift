import Defaults
import Foundation
import Testing

/// The kinds of suite that every storage test runs against.
enum SuiteKind: String, CaseIterable, CustomTestStringConvertible {
    case inMemory
    case userDefaults
    /// Opt-in (see ``withFileSuite``): a ``FileSuite`` in a temporary directory.
    case fileSuite

    /// The suites every storage test runs against.
    static var allCases: [SuiteKind] { [.inMemory, .userDefaults] }
    /// Those and a ``FileSuite``, for tests of what is stored.
    static var withFileSuite: [SuiteKind] { allCases + [.fileSuite] }

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
        case .fileSuite:
            return FileSuite(name: name, directory: TemporarySuites.makeDirectory(), arguments: [])
        }
    }
}

/// Names of `UserDefaults` suites the tests created, removed at exit so no file is left behind.
enum TemporarySuites {
    nonisolated(unsafe) private static var names: [String] = []
    nonisolated(unsafe) private static var directories: [URL] = []
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
            for directory in TemporarySuites.directories {
                try? FileManager.default.removeItem(at: directory)
            }
        }
    }()

    static func remember(_ name: String) {
        _ = cleanup
        lock.withLock { names.append(name) }
    }

    /// A new temporary directory, removed at exit.
    static func makeDirectory() -> URL {
        _ = cleanup
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-defaults-tests-\(UUID().uuidString)", isDirectory: true)
        lock.withLock { directories.append(directory) }
        return directory
    }
}
