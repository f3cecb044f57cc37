/// The rules deciding every synced value, with no I/O: from a key's journal entry, the value its
/// suite holds and a record from the store, what sync does (record a change, apply, keep, keep
/// aside, push). ``SyncEngine`` reads the inputs, asks, and carries out the answer.
///
/// Values are compared by digest (``SyncValue/digest(of:)``, ``SyncValue/absentDigest`` for no
/// value) and versions by timestamp: the newest write wins, wherever it was made. The value a key
/// holds is its *stored* value (``DefaultsSuite/persistentStoredValues()``): a registered default
/// or a value the administrator enforces is never a key's value here, so it is never pushed, and a
/// remote value is stored beneath what the administrator enforces, for when it stops.
enum SyncRules {

    // MARK: Local values

    /// What the value a synced key's suite holds is, to the journal.
    enum Local: Equatable {
        /// The journal knows it: pushed or pending already, or applied from elsewhere.
        case known
        /// The value the journal's entry replaced: another process syncing the suite recorded a
        /// newer one and has not written the suite's file yet (it makes its journal durable first).
        case notYetWritten
        /// Nothing stored and never synced: nothing to push, and any remote value is newer.
        case neverStored
        /// A change, to record as pending (``pendingEntry(digest:replacing:isFoundBeforeSyncing:clock:)``).
        /// `isFoundBeforeSyncing`: found on the first look with no entry, so stored before the key
        /// was ever synced: it gets the oldest timestamp, so that a value on the store wins over it.
        case changed(isFoundBeforeSyncing: Bool)
    }

    /// What the value the suite holds is to a journal holding `entry`.
    ///
    /// - Parameters:
    ///   - digest: The held value's digest in the form of a recorded digest (an earlier version
    ///     recorded another: ``SyncValue/digest(of:likeRecorded:)``), the current form for `nil`.
    ///   - isFirstLook: The first look at the key since sync started watching it.
    ///   - isOwnWrite: This process wrote the value; otherwise the value an entry replaced is the
    ///     file not yet written by the process that made the entry, not a change.
    static func local(
        digest: (_ likeRecorded: String?) -> String, entry: SyncJournal.Entry?, isFirstLook: Bool, isOwnWrite: Bool
    ) -> Local {
        guard let entry else {
            return digest(nil) == SyncValue.absentDigest ? .neverStored : .changed(isFoundBeforeSyncing: isFirstLook)
        }
        if digest(entry.digest) == entry.digest { return .known }
        if !isOwnWrite, let previous = entry.previousDigest, digest(previous) == previous { return .notYetWritten }
        return .changed(isFoundBeforeSyncing: false)
    }

    /// The journal entry recording a local change: pending, stamped by `clock` (or the oldest
    /// timestamp for a value found before syncing), with the digest of the value it replaces.
    static func pendingEntry(
        digest: String, replacing entry: SyncJournal.Entry?, isFoundBeforeSyncing: Bool, clock: HybridLogicalClock
    ) -> SyncJournal.Entry {
        SyncJournal.Entry(
            timestamp: isFoundBeforeSyncing ? .unknown(origin: clock.origin) : clock.now(),
            digest: digest,
            isPending: true,
            previousDigest: entry?.digest ?? SyncValue.absentDigest)
    }

    // MARK: Remote records

    /// A remote record as the local key would store it.
    enum Incoming: Equatable {
        /// The value to store (`nil`: the key's value is removed), and its digest.
        case value(digestedAs: String)
        /// No key of the record's name can hold it: another version of the program stores another
        /// type there, or a former name's value its migration cannot convert.
        case unreadable(reason: String)
        /// Stamped further ahead of this machine's clock than clocks disagree
        /// (`WireVersion.isTooFarAhead(of:)`): applied, it would win every later change of its key.
        case aheadOfClock(reason: String)
    }

    /// What to do with a remote record of a synced key.
    enum Remote: Equatable {
        /// The journal holds this version or a newer one.
        case notNewer
        /// Neither applied (the key would read its default) nor answered with the local value
        /// (which would push it over the other machine's): kept aside, reported, the local value stays.
        case keepAside(reason: String)
        /// The suite holds a change the journal has not recorded yet (its observer has not run):
        /// newer than the record, so recorded once the clock has seen the record, kept and pushed.
        case keepLocal
        /// Stored, with this entry in the journal (not pending: it came from the store).
        case apply(SyncJournal.Entry)
    }

    /// Whether the store's version `timestamp` is newer than what the journal holds.
    static func isNewer(_ timestamp: SyncTimestamp, than entry: SyncJournal.Entry?) -> Bool {
        entry.map { $0.timestamp < timestamp } ?? true
    }

    /// What to do with a record stamped `timestamp`, arriving as `incoming`, for a key whose
    /// journal holds `entry` and whose suite holds a value that is `local` to the journal, of
    /// digest `heldDigest`.
    static func remote(
        _ timestamp: SyncTimestamp, _ incoming: Incoming, entry: SyncJournal.Entry?, local: Local, heldDigest: String
    ) -> Remote {
        guard isNewer(timestamp, than: entry) else { return .notNewer }
        switch incoming {
        case .unreadable(let reason), .aheadOfClock(let reason):
            return .keepAside(reason: reason)
        case .value(let digest):
            if case .changed = local { return .keepLocal }
            return .apply(
                SyncJournal.Entry(timestamp: timestamp, digest: digest, isPending: false, previousDigest: heldDigest))
        }
    }

    // MARK: Pushing

    /// Where a local change not on the store stands.
    enum Standing: Equatable {
        /// Pushed at the next push: what waiting for sync waits for.
        case pending
        /// Not pushed now: the store refused this version (tried again when the key's value
        /// changes, or by the next session with a store), or the administrator manages the key
        /// here (the value beneath what is enforced waits until it stops).
        case setAside(SetAside)
    }

    /// Why a change not on the store is not pushed now.
    enum SetAside: Equatable {
        case refused(reason: String)
        case managed
    }

    /// Where the change `entry` records stands: the one rule of what is pending, which every
    /// count or list of pending changes goes through (the engine's status and push, waiting for
    /// sync, `defaults-sync status`, `defaults explain`). `nil`: nothing to push, the entry's
    /// version is on the store or came from it.
    ///
    /// - Parameters:
    ///   - refused: The version the store refused and why: the engine passes its session's
    ///     refusal; a reader of the journal alone, the one the engine recorded in the entry
    ///     (``SyncJournal/Entry/recordedRefusal``), the last session's.
    ///   - isManaged: Whether the administrator manages the key here.
    static func standing(
        _ entry: SyncJournal.Entry?, refused: (version: SyncTimestamp, reason: String)?, isManaged: Bool
    ) -> Standing? {
        guard let entry, entry.isPending else { return nil }
        if isManaged { return .setAside(.managed) }
        if let refused, refused.version == entry.timestamp { return .setAside(.refused(reason: refused.reason)) }
        return .pending
    }

    /// The entry once the store holds the version stamped `pushed`: no longer pending, unless the
    /// key changed again meanwhile; `nil` when nothing changes.
    static func afterPush(_ entry: SyncJournal.Entry?, pushed: SyncTimestamp) -> SyncJournal.Entry? {
        guard var entry, entry.isPending, entry.timestamp <= pushed else { return nil }
        entry.isPending = false
        entry.refusal = nil
        return entry
    }

    /// The entry made pending again when the store holds an older version of its value, or none
    /// (a new or reset store): `remote` is the store's version, `nil` when it has none. A key
    /// that never had a value here and has none on the store has nothing to push.
    static func againstStore(_ entry: SyncJournal.Entry?, remote: SyncTimestamp?) -> SyncJournal.Entry? {
        guard var entry, !entry.isPending, entry.digest != SyncValue.absentDigest || remote != nil else { return nil }
        guard remote.map({ $0 < entry.timestamp }) ?? true else { return nil }
        entry.isPending = true
        entry.refusal = nil
        return entry
    }
}
