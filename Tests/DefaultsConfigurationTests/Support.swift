import Configuration
import Defaults
import DefaultsConfiguration
import Foundation
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

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    func suite() -> FileSuite {
        FileSuite(name: name, directory: directory, arguments: [])
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
