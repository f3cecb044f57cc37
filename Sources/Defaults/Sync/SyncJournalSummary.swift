import Foundation

/// What one suite's sync journal holds, as `defaults-sync status` shows it.
package struct SyncJournalSummary: Sendable, Hashable {
    /// The suite's file name without `.plist`.
    public var suite: String
    /// Local changes not yet pushed.
    public var pendingChanges: Int
    /// When this suite last synced.
    public var lastSync: Date?
}

extension Defaults.iCloud {
    /// The sync journals of the suites stored in `directory`: what is pending, and when each last
    /// synced. Journals are read through ``FileSuite``, so a hostile file is refused, not trusted.
    package static func journalSummaries(in directory: URL = FileSuite.defaultDirectory)
        -> [SyncJournalSummary]
    {
        let journals = directory.appendingPathComponent(".defaults-sync", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: journals.path)) ?? []
        return names.filter { $0.hasSuffix(".plist") }.sorted().map { name in
            let journal = SyncJournal(
                storage: FileSuite(fileURL: journals.appendingPathComponent(name, isDirectory: false), arguments: []))
            return SyncJournalSummary(
                suite: String(name.dropLast(".plist".count)),
                pendingChanges: journal.pendingKeys.count,
                lastSync: journal.lastSync)
        }
    }
}
