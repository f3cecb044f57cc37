import Foundation
import Testing

@testable import Defaults
@testable import DefaultsSync

/// The rules deciding every synced value, case by case, with no store, suite or file.
@Suite struct SyncRulesTests {
    typealias Entry = SyncJournal.Entry

    static let absent = SyncValue.absentDigest
    static let old = SyncTimestamp(wallTime: 1_000, counter: 0, origin: "b")
    static let now = SyncTimestamp(wallTime: 2_000, counter: 0, origin: "b")
    static let later = SyncTimestamp(wallTime: 3_000, counter: 0, origin: "b")

    /// A clock whose wall clock reads 1.5 s after 1970, behind every remote timestamp here but `old`.
    static func clock() -> HybridLogicalClock {
        HybridLogicalClock(origin: "a", wallClock: { Date(timeIntervalSince1970: 1.5) })
    }

    /// Every journal entry a key can have, against the digests `v1` and `v2`.
    static let entries: [Entry?] =
        [nil]
        + [true, false].flatMap { isPending in
            [nil, absent, "v1", "v2"].flatMap { previous in
                ["v1", "v2", absent].map {
                    Entry(timestamp: now, digest: $0, isPending: isPending, previousDigest: previous)
                }
            }
        }
    static let digests = ["v1", "v2", absent]
    static let incomings: [SyncRules.Incoming] = [
        .value(digestedAs: "v1"), .value(digestedAs: "v2"), .value(digestedAs: absent), .unreadable(reason: "an Int"),
        .aheadOfClock(reason: "two days ahead"),
    ]
    static let locals: [SyncRules.Local] = [
        .known, .notYetWritten, .neverStored, .changed(isFoundBeforeSyncing: false),
        .changed(isFoundBeforeSyncing: true),
    ]

    // MARK: Local values

    @Test func aValueIsKnownExactlyWhenTheJournalHoldsItsDigest() {
        for entry in Self.entries {
            for digest in Self.digests {
                for isFirstLook in [true, false] {
                    for isOwnWrite in [true, false] {
                        let local = SyncRules.local(
                            digest: { _ in digest }, entry: entry, isFirstLook: isFirstLook, isOwnWrite: isOwnWrite)
                        #expect(
                            (local == .known) == (entry?.digest == digest), "\(String(describing: entry)) \(digest)")
                    }
                }
            }
        }
    }

    @Test func aKeyWithNothingStoredAndNoEntryHasNothingToPush() {
        // A registered default is not a stored value: a machine with only its default pushes nothing.
        for isFirstLook in [true, false] {
            let local = SyncRules.local(
                digest: { _ in Self.absent }, entry: nil, isFirstLook: isFirstLook, isOwnWrite: true)
            #expect(local == .neverStored)
        }
        #expect(!Self.isPending(nil))
    }

    @Test func theValueAnEntryReplacedIsNotAChangeUnlessThisProcessWroteIt() {
        for entry in Self.entries {
            guard let entry, let previous = entry.previousDigest, previous != entry.digest else { continue }
            #expect(
                SyncRules.local(digest: { _ in previous }, entry: entry, isFirstLook: false, isOwnWrite: false)
                    == .notYetWritten
            )
            #expect(
                SyncRules.local(digest: { _ in previous }, entry: entry, isFirstLook: false, isOwnWrite: true)
                    == .changed(isFoundBeforeSyncing: false))
        }
    }

    @Test func onlyAValueFoundOnTheFirstLookWithNoEntryCountsAsStoredBeforeSyncing() {
        for entry in Self.entries {
            for digest in Self.digests {
                for isFirstLook in [true, false] {
                    let local = SyncRules.local(
                        digest: { _ in digest }, entry: entry, isFirstLook: isFirstLook, isOwnWrite: false)
                    let expected = entry == nil && digest != Self.absent && isFirstLook
                    #expect((local == .changed(isFoundBeforeSyncing: true)) == expected)
                }
            }
        }
    }

    @Test func aValueFoundBeforeSyncingLosesToAnyValueOnTheStore() {
        let clock = Self.clock()
        let found = SyncRules.pendingEntry(digest: "v1", replacing: nil, isFoundBeforeSyncing: true, clock: clock)
        #expect(found.isPending)
        #expect(found.timestamp < SyncTimestamp(wallTime: 1, counter: 0, origin: ""))
        let verdict = SyncRules.remote(
            Self.old, .value(digestedAs: "v2"), entry: found, local: .known, heldDigest: "v1")
        #expect(verdict == .apply(Entry(timestamp: Self.old, digest: "v2", isPending: false, previousDigest: "v1")))
    }

    @Test func aChangeIsStampedAfterEverythingTheClockSawAndRecordsWhatItReplaced() {
        let clock = Self.clock()
        clock.receive(Self.later)
        let replaced = Entry(timestamp: Self.now, digest: "v1", isPending: false, previousDigest: nil)
        let change = SyncRules.pendingEntry(
            digest: "v2", replacing: replaced, isFoundBeforeSyncing: false, clock: clock)
        #expect(change.timestamp > Self.later)
        #expect(change.isPending)
        #expect(change.previousDigest == "v1")
        let first = SyncRules.pendingEntry(digest: "v1", replacing: nil, isFoundBeforeSyncing: false, clock: clock)
        #expect(first.previousDigest == Self.absent)
    }

    // MARK: Remote records

    @Test func everyRemoteRecordIsDecidedByItsVersionItsReadabilityAndTheLocalValue() {
        for entry in Self.entries {
            for timestamp in [Self.old, Self.now, Self.later] {
                for incoming in Self.incomings {
                    for local in Self.locals {
                        let verdict = SyncRules.remote(
                            timestamp, incoming, entry: entry, local: local, heldDigest: "held")
                        let isNewer = entry.map { $0.timestamp < timestamp } ?? true
                        switch (isNewer, incoming, local) {
                        case (false, _, _):
                            #expect(verdict == .notNewer)
                        case (true, .unreadable(let reason), _), (true, .aheadOfClock(let reason), _):
                            #expect(verdict == .keepAside(reason: reason))
                        case (true, .value, .changed):
                            #expect(verdict == .keepLocal)
                        case (true, .value(let digest), _):
                            #expect(
                                verdict
                                    == .apply(
                                        Entry(
                                            timestamp: timestamp, digest: digest, isPending: false,
                                            previousDigest: "held")))
                        }
                    }
                }
            }
        }
    }

    @Test func anAppliedValueIsNeverPushedBack() {
        for incoming in Self.incomings {
            guard case .value(let digest) = incoming else { continue }
            let verdict = SyncRules.remote(
                Self.later, incoming, entry: nil, local: .neverStored, heldDigest: Self.absent)
            guard case .apply(let entry) = verdict else {
                Issue.record("\(verdict)")
                continue
            }
            // Once written, the suite holds the value: known, not a change, and not pending.
            #expect(
                SyncRules.local(digest: { _ in digest }, entry: entry, isFirstLook: false, isOwnWrite: false) == .known)
            #expect(!Self.isPending(entry))
            // Until it is written, another process reading the suite sees the value it replaced:
            // not a change either.
            if digest != Self.absent {
                #expect(
                    SyncRules.local(digest: { _ in Self.absent }, entry: entry, isFirstLook: false, isOwnWrite: false)
                        == .notYetWritten)
            }
        }
    }

    @Test func anOfflineChangeOlderThanARemoteOneEndsWithTheRemoteValueAndIsNotPushed() {
        // Written offline at `now`, never pushed; another machine wrote at `later`.
        let offline = Entry(timestamp: Self.now, digest: "mine", isPending: true, previousDigest: Self.absent)
        let local = SyncRules.local(digest: { _ in "mine" }, entry: offline, isFirstLook: false, isOwnWrite: false)
        #expect(local == .known)
        let verdict = SyncRules.remote(
            Self.later, .value(digestedAs: "theirs"), entry: offline, local: local, heldDigest: "mine")
        guard case .apply(let applied) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(!Self.isPending(applied))
        // And the store's record of it, older than the offline change, does not win.
        #expect(
            SyncRules.remote(Self.old, .value(digestedAs: "older"), entry: offline, local: local, heldDigest: "mine")
                == .notNewer)
    }

    @Test func aLocalChangeNotRecordedYetIsKeptAndStampedAfterTheRecord() {
        let clock = Self.clock()
        let entry = Entry(timestamp: Self.now, digest: "v1", isPending: false, previousDigest: nil)
        let local = SyncRules.local(digest: { _ in "v2" }, entry: entry, isFirstLook: false, isOwnWrite: false)
        #expect(
            SyncRules.remote(Self.later, .value(digestedAs: "v3"), entry: entry, local: local, heldDigest: "v2")
                == .keepLocal)
        // The engine lets the clock see the record, then records the change.
        clock.receive(Self.later)
        let kept = SyncRules.pendingEntry(digest: "v2", replacing: entry, isFoundBeforeSyncing: false, clock: clock)
        #expect(kept.timestamp > Self.later)
        #expect(Self.isPending(kept))
    }

    @Test func aValueNoLocalKeyCanReadIsKeptAsideNotAppliedNorAnswered() {
        let entry = Entry(timestamp: Self.now, digest: "v1", isPending: false, previousDigest: nil)
        let verdict = SyncRules.remote(
            Self.later, .unreadable(reason: "Bool cannot read a string"), entry: entry, local: .known, heldDigest: "v1")
        #expect(verdict == .keepAside(reason: "Bool cannot read a string"))
        // Nothing recorded: the key's entry stays as it was, not pending, so nothing is pushed over it.
        #expect(!Self.isPending(entry))
    }

    // MARK: Pushing

    /// Whether `entry` is pending to an engine that has seen no refusal, of a key not managed.
    static func isPending(_ entry: Entry?) -> Bool {
        SyncRules.standing(entry, refused: nil, isManaged: false) == .pending
    }

    @Test func whatIsPending() {
        let pending = Entry(timestamp: Self.now, digest: "v1", isPending: true, previousDigest: nil)
        let pushed = Entry(timestamp: Self.now, digest: "v1", isPending: false, previousDigest: nil)
        typealias Refusal = (version: SyncTimestamp, reason: String)
        let cases: [(String, Entry?, refused: Refusal?, isManaged: Bool, SyncRules.Standing?)] = [
            ("a pending change", pending, nil, false, .pending),
            ("no entry", nil, nil, false, nil),
            ("a change on the store already", pushed, nil, false, nil),
            (
                "the version the store refused", pending, (Self.now, "too long"), false,
                .setAside(.refused(reason: "too long"))
            ),
            ("a newer version than the one refused", pending, (Self.old, "too long"), false, .pending),
            ("a key the administrator manages", pending, nil, true, .setAside(.managed)),
            ("a refused version of a managed key", pending, (Self.now, "too long"), true, .setAside(.managed)),
            ("a refused version on the store since", pushed, (Self.now, "too long"), false, nil),
        ]
        for (name, entry, refused, isManaged, standing) in cases {
            #expect(SyncRules.standing(entry, refused: refused, isManaged: isManaged) == standing, "\(name)")
        }
    }

    @Test("A refusal recorded in the journal is that of the entry's version, and goes once it is pushed or changed")
    func recordedRefusal() throws {
        var refused = Entry(timestamp: Self.now, digest: "v1", isPending: true, previousDigest: nil)
        refused.refusal = "too long"
        let recorded = try #require(refused.recordedRefusal)
        #expect(recorded.version == Self.now && recorded.reason == "too long")
        #expect(
            SyncRules.standing(refused, refused: recorded, isManaged: false) == .setAside(.refused(reason: "too long")))
        #expect(SyncRules.afterPush(refused, pushed: Self.now)?.refusal == nil)
        let changed = SyncRules.pendingEntry(
            digest: "v2", replacing: refused, isFoundBeforeSyncing: false, clock: Self.clock())
        #expect(changed.refusal == nil)
    }

    @Test func whatAPushLeavesPending() {
        let pending = Entry(timestamp: Self.now, digest: "v1", isPending: true, previousDigest: "v0")
        var cleared = pending
        cleared.isPending = false
        let cases: [(String, Entry?, pushed: SyncTimestamp, after: Entry?)] = [
            ("the version pushed", pending, Self.now, cleared),
            ("an older version than the one pushed", pending, Self.later, cleared),
            ("changed again after the version pushed", pending, Self.old, nil),
            ("not pending", cleared, Self.now, nil),
            ("no entry", nil, Self.now, nil),
        ]
        for (name, entry, pushed, after) in cases {
            #expect(SyncRules.afterPush(entry, pushed: pushed) == after, "\(name)")
        }
    }

    @Test func whatIsPushedAgainToAStoreBehind() {
        let synced = Entry(timestamp: Self.now, digest: "v1", isPending: false, previousDigest: nil)
        let removed = Entry(timestamp: Self.now, digest: Self.absent, isPending: false, previousDigest: "v1")
        var again = synced
        again.isPending = true
        var removedAgain = removed
        removedAgain.isPending = true
        let cases: [(String, Entry?, remote: SyncTimestamp?, after: Entry?)] = [
            ("a store without the key (new or reset)", synced, nil, again),
            ("a store with an older version", synced, Self.old, again),
            ("a store with this version", synced, Self.now, nil),
            ("a store with a newer version", synced, Self.later, nil),
            ("a removal the store holds an older value of", removed, Self.old, removedAgain),
            ("a removal of a key the store never had", removed, nil, nil),
            ("a change pending already", again, nil, nil),
            ("no entry", nil, nil, nil),
        ]
        for (name, entry, remote, after) in cases {
            #expect(SyncRules.againstStore(entry, remote: remote) == after, "\(name)")
        }
    }

    // MARK: Digests recorded by an earlier version

    @Test func digestsAnEarlierVersionRecordedAreComparedInTheirOwnForm() {
        // The held value's digest is "vNEW" in this version's form and "old" in the earlier one's.
        let digest: (String?) -> String = { recorded in recorded.map { $0.hasPrefix("v") } ?? true ? "vNEW" : "old" }
        let upgraded = Entry(timestamp: Self.now, digest: "old", isPending: false, previousDigest: "older")
        #expect(SyncRules.local(digest: digest, entry: upgraded, isFirstLook: true, isOwnWrite: false) == .known)
        // A change recorded by this version replaced a value whose digest the earlier one recorded.
        let replaced = Entry(timestamp: Self.now, digest: "vOTHER", isPending: true, previousDigest: "old")
        #expect(
            SyncRules.local(digest: digest, entry: replaced, isFirstLook: false, isOwnWrite: false) == .notYetWritten)
        #expect(
            SyncRules.local(digest: digest, entry: replaced, isFirstLook: false, isOwnWrite: true)
                == .changed(isFoundBeforeSyncing: false))
        // A new change is recorded in this version's form.
        let change = SyncRules.pendingEntry(
            digest: digest(nil), replacing: upgraded, isFoundBeforeSyncing: false, clock: Self.clock())
        #expect(change.digest == "vNEW")
        #expect(change.previousDigest == "old")
    }
}
