import DefaultsFiles
import DefaultsPropertyList
import Foundation

/// What one suite's sync journal holds, as `defaults-sync status` shows it.
package struct SyncJournalSummary: Sendable, Hashable {
    /// The suite's file name without `.plist`.
    package var suite: String
    /// Local changes not yet pushed.
    package var pendingChanges: Int
    /// When this suite last synced.
    package var lastSync: Date?
    /// Why the journal could not be read (then nothing else is known), or `nil`.
    package var problem: String?
}

extension Defaults.iCloud {
    /// The sync journals of the suites stored in `directory`: what is pending, and when each last
    /// synced. Each journal is read through the file layer's one reader (`SuiteFile`), which
    /// changes nothing: a damaged or hostile journal is reported, not moved, repaired or trusted.
    package static func journalSummaries(in directory: URL = FileSuite.defaultDirectory)
        -> [SyncJournalSummary]
    {
        let journals = directory.appendingPathComponent(".defaults-sync", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: journals.path)) ?? []
        return names.filter { $0.hasSuffix(".plist") }.sorted().map { name in
            var summary = SyncJournalSummary(suite: String(name.dropLast(".plist".count)), pendingChanges: 0)
            let file = SuiteFile(url: journals.appendingPathComponent(name, isDirectory: false))
            switch file.read() {
            case .values(let values, _):
                let journal = SyncJournal.Contents(values)
                summary.pendingChanges = journal.pendingKeys.count
                summary.lastSync = journal.lastSync
            case .absent:
                break
            case .notRegularFile(_, let kind):
                summary.problem = "\(file.path) is \(kind), not a journal"
            case .damaged(_, let reason), .unreadable(let reason):
                summary.problem = "\(file.path) could not be read: \(reason)"
            }
            return summary
        }
    }
}
