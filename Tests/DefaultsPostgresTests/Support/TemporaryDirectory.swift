import Foundation

/// A directory of its own for one test (a machine's `XDG_CONFIG_HOME`), deleted with the value.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("defaults-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A new subdirectory: another machine's config directory.
    func machine(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
