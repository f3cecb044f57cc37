@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Synchronization

/// One test's directories: the user's (`XDG_CONFIG_HOME`) and two administrator directories
/// (`XDG_CONFIG_DIRS`, the first listed winning), all removed when the test ends.
final class AdministratorSandbox {
    let user: FileSuiteTemporaryDirectory
    let first: FileSuiteTemporaryDirectory
    let second: FileSuiteTemporaryDirectory
    /// A suite name no other test uses.
    let name = "swift-defaults-admin-\(UUID().uuidString)"

    init() throws {
        user = try FileSuiteTemporaryDirectory()
        first = try FileSuiteTemporaryDirectory()
        second = try FileSuiteTemporaryDirectory()
    }

    var directories: [URL] { [first.url, second.url] }

    func suite(arguments: [String] = []) -> FileSuite {
        FileSuite(name: name, directory: user.url, arguments: arguments, administratorDirectories: directories)
    }

    func vendorURL(in directory: FileSuiteTemporaryDirectory) -> URL {
        directory.url.appendingPathComponent(name + ".plist")
    }

    func managedURL(in directory: FileSuiteTemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("managed", isDirectory: true).appendingPathComponent(name + ".plist")
    }

    /// Writes an administrator file as an administrator's tool would: a new file renamed into place.
    func write(_ values: [String: Any], to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PropertyList.encodeXML(values).write(to: url, options: .atomic)
    }

    /// Creates the `managed` directory of `directory`, so that a suite opened afterwards watches it.
    func makeManagedDirectory(in directory: FileSuiteTemporaryDirectory) throws {
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("managed", isDirectory: true), withIntermediateDirectories: true)
    }
}

/// Records the problems a suite reports through `onProblem`.
final class FileSuiteProblemRecorder: Sendable {
    private final class Storage: Sendable {
        let kinds = Mutex<[DefaultsError.Kind]>([])
    }

    private let storage = Storage()

    init(_ suite: FileSuite) {
        suite.onProblem = { [storage] problem in storage.kinds.withLock { $0.append(problem.kind) } }
    }

    var kinds: [DefaultsError.Kind] { storage.kinds.withLock { $0 } }
}
