import Configuration
import Defaults
import DefaultsConfiguration
import Foundation
import Synchronization
import TestSupport

/// A fresh directory for one test's suites (the `XDG_CONFIG_HOME` of the processes it spawns),
/// removed when the test ends.
final class ProviderSandbox: Sendable {
    let directory: URL
    /// A suite name no other test uses.
    let name = "swift-defaults-configuration-tests-\(UUID().uuidString)"

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-defaults-configuration-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The suites opened here, flushed before the directory is removed: a write still pending
    /// would recreate it.
    private let suites = Mutex<[FileSuite]>([])

    deinit {
        for suite in suites.withLock({ $0 }) {
            try? suite.flush()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    func suite(arguments: [String] = [], administratorDirectories: [URL]? = nil) -> FileSuite {
        let suite = FileSuite(
            name: name, directory: directory, arguments: arguments, administratorDirectories: administratorDirectories)
        suites.withLock { $0.append(suite) }
        return suite
    }

    /// Runs the package's `defaults` command in another process on this directory.
    func runDefaults(_ arguments: String...) throws {
        let result = try ChildProcess.run(
            builtExecutable("defaults"), arguments, environment: ["XDG_CONFIG_HOME": directory.path])
        guard result.status == 0 else {
            throw ProviderTestFailure("defaults \(arguments.joined(separator: " ")): \(result)")
        }
    }
}

struct ProviderTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
