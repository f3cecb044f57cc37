import DefaultsFiles
import DefaultsPropertyList
import Foundation

/// What a suite's sync journal says of one key, as `defaults explain` shows it: the version of
/// the value it last recorded, and whether that is the value the suite's file holds.
package struct SyncedValueRecord: Sendable, Hashable {
    /// When the recorded version was written, by the clock of the process that wrote it; `nil`
    /// for a value found already stored when syncing began, whose time is unknown.
    package var writtenAt: Date?
    /// The identifier of the writing process's clock (a random identifier unless the program
    /// gave one): the journal does not name machines.
    package var writer: String
    /// Whether the version is a change of this machine not yet pushed.
    package var isPending: Bool
    /// Whether the recorded version is the value the suite's file holds now; when it is not, the
    /// file changed since (a change the library records and pushes when a syncing program runs).
    package var matchesStoredValue: Bool
}

extension Defaults.iCloud {
    /// What the sync journal of the suite stored at `suiteFile` records for `key`, whose value in
    /// that file is `storedValue`; `nil` when the suite has no readable journal or it holds no
    /// entry for the key. The journal is read through the file layer's one reader (``SuiteFile``),
    /// changing nothing.
    package static func journalRecord(
        forKey key: String, suiteFile: URL, storedValue: PropertyListValue?
    ) -> SyncedValueRecord? {
        let file = SuiteFile(url: SyncJournal.journalURL(forSuiteFile: suiteFile))
        guard case .values(let values, _) = file.read(),
            let entry = SyncJournal.Contents(values).entry(forKey: key)
        else { return nil }
        let local = SyncRules.local(
            digest: { SyncValue.digest(of: storedValue, likeRecorded: $0) }, entry: entry, isFirstLook: false,
            isOwnWrite: true)
        return SyncedValueRecord(
            writtenAt: entry.timestamp.wallTime > 0
                ? Date(timeIntervalSince1970: Double(entry.timestamp.wallTime) / 1000) : nil,
            writer: entry.timestamp.origin,
            isPending: entry.isPending,
            matchesStoredValue: local == .known)
    }
}
