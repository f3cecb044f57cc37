import DefaultsFiles
import DefaultsPropertyList
import DefaultsStorage
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
    /// Whether the version is a change of this machine pushed at a syncing program's next push
    /// (``SyncRules/Standing/pending``).
    package var isPending: Bool
    /// Why the version, a change of this machine not on the store, is not pushed now (the store
    /// refused it, or the administrator manages the key); `nil` when it is pushed or on the store.
    package var setAsideBecause: String?
    /// Whether the recorded version is the value the suite's file holds now; when it is not, the
    /// file changed since (a change the library records and pushes when a syncing program runs).
    package var matchesStoredValue: Bool
}

extension SyncJournal {
    /// What the sync journal of the suite stored at `suiteFile` records for `key`, whose value in
    /// that file is `storedValue` and which the administrator manages here when `isManaged`;
    /// `nil` when the suite has no readable journal or it holds no entry for the key. The journal
    /// is read through the file layer's one reader (``SuiteFile``), changing nothing.
    package static func record(
        forKey key: String, suiteFile: URL, storedValue: PropertyListValue?, isManaged: Bool
    ) -> SyncedValueRecord? {
        let file = SuiteFile(url: SyncJournal.journalURL(forSuiteFile: suiteFile))
        guard case .values(let values, _) = file.read(),
            let entry = SyncJournal.Contents(values).entry(forKey: key)
        else { return nil }
        let local = SyncRules.local(
            digest: { SyncValue.digest(of: storedValue, likeRecorded: $0) }, entry: entry, isFirstLook: false,
            isOwnWrite: true)
        let standing = SyncRules.standing(entry, refused: entry.recordedRefusal, isManaged: isManaged)
        let setAside: String? =
            switch standing {
            case .setAside(.refused(let reason)): "the store refused it: \(reason)"
            case .setAside(.managed): "the administrator manages the key here"
            case .pending, nil: nil
            }
        return SyncedValueRecord(
            writtenAt: entry.timestamp.wallTime > 0
                ? Date(timeIntervalSince1970: Double(entry.timestamp.wallTime) / 1000) : nil,
            writer: entry.timestamp.origin,
            isPending: standing == .pending,
            setAsideBecause: setAside,
            matchesStoredValue: local == .known)
    }
}
