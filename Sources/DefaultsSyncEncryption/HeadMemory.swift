import Defaults
import Foundation

/// Where a device remembers the newest namespace head it has seen or pushed, so that after a
/// restart it still refuses an older one: a small suite file of its own beside the sync journals,
/// `<directory>/.defaults-sync/end-to-end-<id>.plist`, or nothing (memory only) without a
/// directory. `id` is derived from the keys, so that it names neither the namespace nor the
/// passphrase, and two namespaces never share a file.
struct HeadMemory: Sendable {
    private let file: FileSuite?

    private static let versionKey = "headVersion"
    private static let claimsKey = "headClaims"

    init(directory: URL?, id: String) {
        file = directory.map { directory in
            FileSuite(
                fileURL: directory.appendingPathComponent(".defaults-sync", isDirectory: true)
                    .appendingPathComponent("end-to-end-\(id).plist", isDirectory: false))
        }
    }

    /// The head remembered: its version and claims; `nil` when none is, or the file is not this
    /// library's (it is then replaced at the next head).
    func load() -> (version: SyncTimestamp, head: NamespaceHead)? {
        guard let file, let text = file.object(forKey: Self.versionKey) as? String,
            let version = SyncTimestamp(text), let data = file.object(forKey: Self.claimsKey) as? Data,
            let head = try? NamespaceHead(decoding: data)
        else { return nil }
        return (version, head)
    }

    /// Remembers a head; written with the suite's coalescing delay (and flushed at exit).
    func remember(version: SyncTimestamp, head: NamespaceHead) {
        file?.setValues([(Self.versionKey, version.description), (Self.claimsKey, head.encoded())])
    }
}
