import DefaultsPropertyList
import Foundation

/// What the library remembers about the synced keys of one suite, durably: per key, the version
/// of the value it holds, a digest of that value, and whether the value still has to be pushed.
///
/// It lives beside the suite's file, in `.defaults-sync/<file name>`, so that a change made while
/// offline (or by a process killed before it could push) is pushed on the next start. A change
/// made while the library was not watching (by `defaults write`, or in a process without a store)
/// is found by its digest.
final class SyncJournal: Sendable {
    struct Entry: Sendable, Equatable {
        var timestamp: SyncTimestamp
        var digest: String
        var isPending: Bool
        /// The digest of the value this entry's value replaced in the suite: another process
        /// syncing the suite may read the suite's file before the change reaches it.
        var previousDigest: String?
        /// Why the store refused this version, recorded by the engine that pushed it, so that a
        /// reader of the journal without that engine (`defaults-sync status`) can tell a refused
        /// change from a pending one. The engine itself goes by its session's refusals: a new
        /// session tries the version again.
        var refusal: String?

        /// The refusal this entry records, in the form ``SyncRules/standing(_:refused:isManaged:)``
        /// takes it.
        var recordedRefusal: (version: SyncTimestamp, reason: String)? {
            refusal.map { (timestamp, $0) }
        }
    }

    /// The entry holding the last sync time; key names cannot start with `@`.
    fileprivate static let lastSyncKey = "@lastSync"

    let storage: any StoreBackedSuite
    /// The journal's file, when it has one: read again when another process wrote it.
    private let file: FileSuite?

    /// The journal of `suite`: a file beside the file a suite of this library keeps its values
    /// in, in memory for one that keeps them in memory, and in the default directory, by suite
    /// name, for others.
    init(for suite: any DefaultsSuite) {
        let store = suite.backend.storeBacked?.store
        if let store, store.fileURL == nil {
            file = nil
            storage = InMemorySuite(name: "\(suite.name).defaults-sync")
        } else {
            let fileURL = store?.fileURL ?? FileSuite.fileURL(forName: suite.name)
            let journal = FileSuite(fileURL: Self.journalURL(forSuiteFile: fileURL), arguments: [])
            file = journal
            storage = journal
        }
    }

    /// Where the journal of the suite stored at `fileURL` lives.
    static func journalURL(forSuiteFile fileURL: URL) -> URL {
        fileURL.deletingLastPathComponent()
            .appendingPathComponent(".defaults-sync", isDirectory: true)
            .appendingPathComponent(fileURL.lastPathComponent, isDirectory: false)
    }

    func entry(forKey key: String) -> Entry? {
        Self.entry(from: storage.storedValue(forKey: key))
    }

    func setEntry(_ entry: Entry, forKey key: String) {
        var fields: [String: PropertyListValue] = [
            "timestamp": .string(entry.timestamp.description), "digest": .string(entry.digest),
            "pending": .boolean(entry.isPending),
        ]
        fields["previous"] = entry.previousDigest.map(PropertyListValue.string)
        fields["refused"] = entry.refusal.map(PropertyListValue.string)
        let value = PropertyListValue.dictionary(fields)
        storage.apply(CollectionOfOne((key: key, value: value as PropertyListValue?)))
    }

    var lastSync: Date? {
        get { storage.object(forKey: Self.lastSyncKey) as? Date }
        set { storage.set(newValue, forKey: Self.lastSyncKey) }
    }

    /// The keys whose recorded change is not on the store, pending or set aside
    /// (``SyncRules/standing(_:refused:isManaged:)``): the keys a suite bound for its journal
    /// syncs, so that a set-aside change is pushed once it can be. Not a count of pending changes.
    var unpushedKeys: [String] {
        Contents(storage.persistentStoredValues()).standings(isManaged: { _ in false }).map(\.key)
    }

    /// A journal's values as read from its file, for reading one without opening it as a suite.
    struct Contents {
        let values: [String: PropertyListValue]

        init(_ values: [String: PropertyListValue]) {
            self.values = values
        }

        /// Where each change the journal holds that is not on the store stands, by key: by the
        /// one rule, with the refusals the journal records and `isManaged` telling which keys the
        /// administrator manages here.
        func standings(isManaged: (String) -> Bool) -> [String: SyncRules.Standing] {
            var standings: [String: SyncRules.Standing] = [:]
            for (key, value) in values where key != SyncJournal.lastSyncKey {
                let entry = SyncJournal.entry(from: value)
                let refused = entry?.recordedRefusal
                standings[key] = SyncRules.standing(entry, refused: refused, isManaged: isManaged(key))
            }
            return standings
        }

        var lastSync: Date? {
            guard case .date(let date)? = values[SyncJournal.lastSyncKey] else { return nil }
            return date
        }

        func entry(forKey key: String) -> Entry? {
            SyncJournal.entry(from: values[key])
        }
    }

    func flush() throws {
        try storage.flush()
    }

    /// Reads the journal's file again if another process wrote it since; returns whether it did.
    /// A process syncing the same suite makes its journal durable before the suite's file, so a
    /// value found in the file that the journal does not know is looked up here again.
    func reloadIfChanged() -> Bool {
        guard let file, !file.isFileAsLoaded() else { return false }
        file.reload()
        return true
    }

    fileprivate static func entry(from value: PropertyListValue?) -> Entry? {
        guard case .dictionary(let dictionary)? = value,
            case .string(let text)? = dictionary["timestamp"], let timestamp = SyncTimestamp(text),
            case .string(let digest)? = dictionary["digest"], case .boolean(let isPending)? = dictionary["pending"]
        else { return nil }
        var previous: String?
        if case .string(let digest)? = dictionary["previous"] {
            previous = digest
        }
        var refusal: String?
        if case .string(let reason)? = dictionary["refused"] {
            refusal = reason
        }
        return Entry(
            timestamp: timestamp, digest: digest, isPending: isPending, previousDigest: previous, refusal: refusal)
    }
}
