@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Synchronization
import TestSupport

/// A fresh directory per test, removed when the test ends, so that tests run in parallel.
final class FileSuiteTemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        // Also removed at exit: a suite's write still pending at `deinit` recreates the directory.
        url = TemporarySuites.makeDirectory()
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // Tests may leave it unwritable or immutable; make it removable first.
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: url)
    }

    func suite(
        _ name: String = "test", arguments: [String] = [], coalescingDelay: Duration = FileSuite.defaultCoalescingDelay
    ) -> FileSuite {
        FileSuite(name: name, directory: url, arguments: arguments, coalescingDelay: coalescingDelay)
    }

    func fileURL(_ name: String = "test") -> URL {
        url.appendingPathComponent(name + ".plist")
    }

    /// The file's top-level dictionary, decoded independently of the suite.
    func storedValues(_ name: String = "test") throws -> [String: Any] {
        let data = try Data(contentsOf: fileURL(name))
        guard let values = try PropertyList.decode(data) as? [String: Any] else {
            throw FileSuiteTestFailure("\(fileURL(name).path) is not a dictionary")
        }
        return values
    }

    /// Files in the directory whose names start with `prefix`.
    func files(startingWith prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix(prefix) }.sorted()
    }
}

struct FileSuiteTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Records a suite's change events for tests to wait on.
final class FileSuiteChangeRecorder: Sendable {
    private final class Storage: Sendable {
        let changes = Mutex<[SuiteChange]>([])
    }

    private let storage = Storage()
    private let token: SuiteChangeCenter.Token
    private let center: SuiteChangeCenter

    init(_ suite: some DefaultsSuite) {
        center = suite.changes
        token = suite.changes.addObserver { [storage] change in
            storage.changes.withLock { $0.append(change) }
        }
    }

    deinit {
        center.removeObserver(token)
    }

    var changes: [SuiteChange] {
        storage.changes.withLock { $0 }
    }

    /// Waits until a recorded change satisfies `predicate`.
    func wait(fileID: String = #fileID, line: Int = #line, until predicate: (SuiteChange) -> Bool) async throws {
        try await waitUntil("a change, among \(changes)", fileID: fileID, line: line) {
            self.changes.contains(where: predicate)
        }
    }
}

/// The permission bits of a path.
func fileSuitePermissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// Runs a shell command; for setting up file systems in tests (mount, chattr). Its exit status,
/// -1 when it could not run.
@discardableResult
func fileSuiteShell(_ command: String) -> Int32 {
    (try? ChildProcess.run("/bin/sh", ["-c", command]))?.status ?? -1
}
