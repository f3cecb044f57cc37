import Configuration
import Defaults
import DefaultsConfiguration
import Foundation

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
        let process = Process()
        process.executableURL = Self.defaultsExecutable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ProviderTestFailure(
                "defaults \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus): "
                    + String(decoding: message, as: UTF8.self)
            )
        }
    }

    /// The `defaults` executable, built beside the test binary (the test target depends on it).
    static var defaultsExecutable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        // On Apple platforms the tests run inside an .xctest bundle.
        while ["xctest"].contains(directory.pathExtension)
            || ["MacOS", "Contents"].contains(directory.lastPathComponent)
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("defaults")
    }
}

struct ProviderTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`, failing with an error if it has not finished after `timeout`. The timeout only
/// keeps a broken test from hanging; nothing is measured.
func withTimeout<Result: Sendable>(
    _ timeout: Duration = .seconds(60),
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next(), let value = result else {
            throw ProviderTestFailure("timed out after \(timeout)")
        }
        return value
    }
}
