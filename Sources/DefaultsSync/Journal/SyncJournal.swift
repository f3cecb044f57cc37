import DefaultsFiles
import DefaultsPropertyList
import DefaultsStorage
import Foundation
import Logging
import Synchronization

/// What the library remembers about the synced keys of one suite, durably: per key, the version
/// of the value it holds, a digest of that value, and whether the value still has to be pushed.
///
/// It lives beside the suite's file, in `.defaults-sync/<file name>`, so that a change made while
/// offline (or by a process killed before it could push) is pushed on the next start. A change
/// made while the library was not watching (by `defaults write`, or in a process without a store)
/// is found by its digest.
///
/// A file of its own, not a suite: its entries are held here and written by the file layer
/// (`SuiteFile.edit`, under the file's lock, on top of what other processes wrote) when the engine
/// flushes it, so that flushing it from a suite's persist listener re-enters no suite. Its format
/// is a property list of one dictionary per key, as it always was.
package final class SyncJournal: Sendable {
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

    private struct State {
        /// The file's values as last read or written, with the entries set since on top.
        var values: [String: PropertyListValue] = [:]
        /// The entries set since the file was last written: put on top of the file's at a flush.
        var unwritten: [String: PropertyListValue] = [:]
        /// The version of the file last read or written (a damaged one included).
        var identity: FileIdentity?
        /// A version of the file this process read or wrote, held open, and its values: a flush
        /// while the file is still that version need not read it again.
        var known: (version: HeldFileVersion, values: [String: PropertyListValue])?
        /// The last flush's failure, logged once.
        var lastFailure: String?
    }

    /// The journal's file; `nil` for a suite that keeps its values in memory.
    private let file: SuiteFile?
    /// Held only to read or change the entries, never during I/O.
    private let state: Mutex<State>
    /// One flush at a time, held across the file's lock, read and write: taken inside a suite's
    /// persisting write (its `io` and file lock), never the other way around.
    private let flushing = Mutex(())

    /// The journal of `suite`: a file beside the file a suite of this library keeps its values
    /// in, in memory for one that keeps them in memory, and in the default directory, by suite
    /// name, for others.
    init(for suite: any DefaultsSuite) {
        let store = suite.backend.storeBacked?.store
        if let store, store.fileURL == nil {
            file = nil
            state = Mutex(State())
        } else {
            let fileURL = store?.fileURL ?? FileSuite.fileURL(forName: suite.name)
            let file = SuiteFile(url: Self.journalURL(forSuiteFile: fileURL))
            self.file = file
            var state = State()
            // A damaged journal is read as empty (values are then found by their digests) and moved
            // aside by the first flush.
            let read = file.read()
            Self.take(read, held: Self.heldVersion(read, of: file), into: &state)
            self.state = Mutex(state)
        }
    }

    /// Where the journal of the suite stored at `fileURL` lives.
    static func journalURL(forSuiteFile fileURL: URL) -> URL {
        fileURL.deletingLastPathComponent()
            .appendingPathComponent(".defaults-sync", isDirectory: true)
            .appendingPathComponent(fileURL.lastPathComponent, isDirectory: false)
    }

    func entry(forKey key: String) -> Entry? {
        Self.entry(from: state.withLock { $0.values[key] })
    }

    func setEntry(_ entry: Entry, forKey key: String) {
        var fields: [String: PropertyListValue] = [
            "timestamp": .string(entry.timestamp.description), "digest": .string(entry.digest),
            "pending": .boolean(entry.isPending),
        ]
        fields["previous"] = entry.previousDigest.map(PropertyListValue.string)
        fields["refused"] = entry.refusal.map(PropertyListValue.string)
        set(.dictionary(fields), forKey: key)
    }

    var lastSync: Date? {
        get { Contents(state.withLock { $0.values }).lastSync }
        set {
            if let newValue { set(.date(newValue), forKey: Self.lastSyncKey) }
        }
    }

    private func set(_ value: PropertyListValue, forKey key: String) {
        let hasFile = file != nil
        state.withLock { state in
            guard state.values[key] != value else { return }
            state.values[key] = value
            if hasFile {
                state.unwritten[key] = value
            }
        }
    }

    /// The keys whose recorded change is not on the store, pending or set aside
    /// (``SyncRules/standing(_:refused:isManaged:)``): the keys a suite bound for its journal
    /// syncs, so that a set-aside change is pushed once it can be. Not a count of pending changes.
    var unpushedKeys: [String] {
        Contents(state.withLock { $0.values }).standings(isManaged: { _ in false }).map(\.key)
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

    /// Whether some entry set here is not in the file yet.
    var hasUnwrittenEntries: Bool {
        state.withLock { !$0.unwritten.isEmpty }
    }

    /// Writes the entries set since the last flush on top of the file's (another process syncing
    /// the suite writes it too), durably, and takes what the other process wrote. A damaged file is
    /// moved aside and replaced by what this journal holds, as is a file removed meanwhile. On
    /// failure the entries stay in memory for the next flush.
    func flush() throws {
        guard let file else { return }
        let backup = try flushing.withLock { _ -> String? in
            let (unwritten, held, known) = state.withLock { ($0.unwritten, $0.values, $0.known) }
            guard !unwritten.isEmpty else { return nil }
            var merged: [String: PropertyListValue] = [:]
            let edit = try file.edit(replacingDamaged: true, known: known, holdingVersion: true) { values in
                // Entries are never removed: one the file lacks was lost with it (damaged, removed).
                values.merge(held) { inFile, _ in inFile }
                values.merge(unwritten) { _, new in new }
                merged = values
            }
            state.withLock { state in
                // An entry set again meanwhile stays unwritten, and on top.
                state.unwritten = state.unwritten.filter { unwritten[$0.key] != $0.value }
                state.values = merged.merging(state.unwritten) { _, new in new }
                state.identity = edit.identity
                state.known = edit.held.map { ($0, merged) }
                state.lastFailure = nil
            }
            return edit.backupPath
        }
        // Logged with no lock held: a log handler may write a suite.
        if let backup {
            let message =
                "the sync journal \(file.path) was not a valid property list; it was moved to \(backup) and "
                + "written again from what this process holds"
            StorageEnvironment.logger.warning("\(message)")
        }
    }

    /// ``flush()``, logging a failure once until the journal is written again: the entries stay in
    /// memory for the next flush, and sync goes on. Returns the failure, for
    /// ``Defaults/flushAll()`` to throw.
    @discardableResult
    func flushLoggingFailure() -> DefaultsError? {
        do {
            try flush()
            return nil
        } catch {
            let message = "\(error)"
            let isNew = state.withLock { state in
                defer { state.lastFailure = message }
                return state.lastFailure != message
            }
            if isNew {
                StorageEnvironment.logger.error(
                    "a sync journal could not be written: \(message); its entries are kept in memory for its next flush"
                )
            }
            return DefaultsError(
                kind: .writeFailed, fileURL: file.map { URL(fileURLWithPath: $0.path, isDirectory: false) },
                message: "the sync journal could not be written: \(message); its entries are kept in memory",
                underlyingError: error)
        }
    }

    /// Reads the journal's file again if another process wrote it since; returns whether it did.
    /// A process syncing the same suite makes its journal durable before the suite's file, so a
    /// value found in the file that the journal does not know is looked up here again. Entries
    /// set here and not written yet stay on top.
    func reloadIfChanged() -> Bool {
        guard let file else { return false }
        // Not beside a flush, which could leave a version older than its own here.
        return flushing.withLock { _ in
            guard let current = try? PosixFile.identity(at: file.path) else { return false }
            if let known = state.withLock({ $0.identity }), known.isSameVersion(as: current) { return false }
            let read = file.read()
            let held = Self.heldVersion(read, of: file)
            return state.withLock { Self.take(read, held: held, into: &$0) }
        }
    }

    /// The version a read found, held open (never under `state`'s lock: it opens the file).
    private static func heldVersion(_ read: SuiteFile.Contents, of file: SuiteFile) -> HeldFileVersion? {
        guard case .values(_, let identity) = read else { return nil }
        return HeldFileVersion(path: file.path, matching: identity)
    }

    /// Takes what a read of the file found: its values, with the entries not written yet on top.
    /// A damaged file or one that is no file keeps the values held, and its version is noted so
    /// that it is not read again until it changes. Returns whether values were read.
    @discardableResult
    private static func take(_ read: SuiteFile.Contents, held: HeldFileVersion?, into state: inout State) -> Bool {
        switch read {
        case .values(let values, let identity):
            state.values = values.merging(state.unwritten) { _, new in new }
            state.identity = identity
            state.known = held.map { ($0, values) }
            return true
        case .damaged(let identity, _), .notRegularFile(let identity, _):
            state.identity = identity
            state.known = nil
            return false
        case .absent, .unreadable:
            return false
        }
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
