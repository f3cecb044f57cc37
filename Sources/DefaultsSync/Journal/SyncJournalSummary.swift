import DefaultsFiles
import DefaultsPropertyList
import DefaultsStorage
import Foundation

/// What one suite's sync journal holds, as `defaults-sync status` shows it.
package struct SyncJournalSummary: Sendable, Hashable {
    /// The suite's file name without `.plist`.
    package var suite: String
    /// Local changes pushed at a syncing program's next push
    /// (``SyncRules/Standing/pending``), as ``SyncStatus/pendingChanges`` counts them.
    package var pendingChanges: Int
    /// Local changes the store refused the last time a program pushed them: tried again when
    /// their value changes, or when a program syncing the suite connects again.
    package var refusedChanges = 0
    /// Local changes of keys the administrator manages here, pushed once it stops.
    package var managedChanges = 0
    /// When this suite last synced.
    package var lastSync: Date?
    /// Why the journal could not be read (then nothing else is known), or `nil`.
    package var problem: String?
}

extension SyncJournal {
    /// The sync journals of the suites stored in `directory`: what is pending or set aside, and
    /// when each last synced. Each journal is read through the file layer's one reader
    /// (`SuiteFile`), which changes nothing: a damaged or hostile journal is reported, not moved,
    /// repaired or trusted. A key is managed when an administrator's file in
    /// `administratorDirectories` enforces it; with no program's keys to check the value's type
    /// against, every value there counts, as in the `defaults` command without a schema.
    package static func summaries(
        in directory: URL = FileSuite.defaultDirectory,
        administratorDirectories: [URL] = FileSuite.defaultAdministratorDirectories
    ) -> [SyncJournalSummary] {
        let journals = directory.appendingPathComponent(".defaults-sync", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: journals.path)) ?? []
        return names.filter { $0.hasSuffix(".plist") }.sorted().map { name in
            var summary = SyncJournalSummary(suite: String(name.dropLast(".plist".count)), pendingChanges: 0)
            let file = SuiteFile(url: journals.appendingPathComponent(name, isDirectory: false))
            switch file.read() {
            case .values(let values, _):
                let journal = SyncJournal.Contents(values)
                let administrator = AdministratorResolution(
                    suiteName: summary.suite, directories: administratorDirectories)
                for standing in journal.standings(isManaged: { administrator.managedFile(forKey: $0) != nil }).values {
                    switch standing {
                    case .pending: summary.pendingChanges += 1
                    case .setAside(.refused): summary.refusedChanges += 1
                    case .setAside(.managed): summary.managedChanges += 1
                    }
                }
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
