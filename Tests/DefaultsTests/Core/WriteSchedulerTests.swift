@_spi(Testing) import Defaults
import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

/// The write scheduler both persistent suites use, on a store that counts, holds and fails its
/// writes.
@Suite("write scheduler", .mayBlock)
struct WriteSchedulerTests {
    @Test func changesWaitForOneWriteThatTakesThemAll() throws {
        let ledger = WriteLedger()
        let store = CountingStore(ledger, delay: .seconds(3_600))
        for _ in 0..<1_000 {
            store.change()
        }
        // Nothing is written by a change itself: one write is scheduled for them all.
        #expect(store.writes.hasScheduledWrite)
        #expect(ledger.counts.writes == 0)
        try store.writes.flush(store)
        #expect(ledger.counts.writes == 1)
        #expect(ledger.counts.written == 1_000)
        // Nothing left: a second flush writes nothing.
        try store.writes.flush(store)
        #expect(ledger.counts.writes == 1)
    }

    @Test func aScheduledWriteRunsAfterTheDelay() async throws {
        let ledger = WriteLedger()
        let store = CountingStore(ledger, delay: .milliseconds(20))
        store.change()
        store.change()
        try await waitUntil { ledger.counts.written == 2 }
        #expect(!store.writes.hasScheduledWrite)
    }

    @Test func aChangeDuringAWriteSchedulesTheNextAndChangesMeanwhileShareIt() async throws {
        let ledger = WriteLedger(holdingFirstWrite: true)
        let store = CountingStore(ledger, delay: .milliseconds(20))
        store.change()
        try await waitUntil { ledger.isHoldingWrite }
        // The first write took its changes before it was held: these need a write of their own,
        // and all of them share it.
        for _ in 0..<500 {
            store.change()
        }
        #expect(store.writes.hasScheduledWrite)
        ledger.releaseWrite()
        try await waitUntil { ledger.counts.written == 501 }
        #expect(ledger.counts.writes == 2)
    }

    @Test func aFlushWaitsForTheWriteInProgress() async throws {
        let ledger = WriteLedger(holdingFirstWrite: true)
        let store = CountingStore(ledger, delay: .milliseconds(1))
        store.change()
        try await waitUntil { ledger.isHoldingWrite }
        store.change()
        let flushed = LockedValue<Int?>(nil)
        DispatchQueue.global().async {
            try? store.writes.flush(store)
            flushed.value = ledger.counts.written
        }
        // The held write has not returned, so neither has the flush (a guard, not a measure:
        // a flush that did not wait would return at once).
        try? await Task.sleep(for: .milliseconds(200))
        #expect(flushed.value == nil)
        ledger.releaseWrite()
        try await waitUntil { flushed.value != nil }
        // When the flush returned, the change made during the held write was written too.
        #expect(flushed.value == 2)
    }

    @Test func aFailingFlushThrowsKeepsTheChangesAndRetries() async throws {
        let ledger = WriteLedger(failures: 2)
        let failures = LockedValue<[String]>([])
        let store = CountingStore(
            ledger, delay: .seconds(3_600), retry: .init(first: .milliseconds(10), longest: .milliseconds(40))
        ) { error in
            failures.value.append("\(error)")
        }
        // Recorded without scheduling a write, so that the flush's failure schedules the retry.
        store.ledger.record()
        #expect(throws: WriteLedger.Failure.self) { try store.writes.flush(store) }
        #expect(ledger.counts.written == 0)
        // The retry fails once more (told to the scheduled-failure handler), then writes.
        try await waitUntil { ledger.counts.written == 1 }
        #expect(failures.value == ["\(WriteLedger.Failure())"])
        #expect(ledger.counts.writes == 1)
    }

    @Test func aFailingWriteWithoutRetryIsWrittenByTheNextFlush() throws {
        let ledger = WriteLedger(failures: 1)
        let store = CountingStore(ledger, delay: .seconds(3_600))
        store.change()
        #expect(throws: WriteLedger.Failure.self) { try store.writes.flush(store) }
        try store.writes.flush(store)
        #expect(ledger.counts.written == 1)
    }

    /// What follows a write (the owner's problem handlers and observers) runs once the write lock
    /// is released, so it may flush again without waiting for itself.
    @Test func whatFollowsAWriteMayFlush() async throws {
        let ledger = WriteLedger()
        let store = CountingStore(ledger, delay: .seconds(3_600))
        let flushedAgain = LockedValue(false)
        ledger.afterWrite.value = {
            ledger.afterWrite.value = nil
            store.change()
            try? store.writes.flush(store)
            flushedAgain.value = true
        }
        store.change()
        DispatchQueue.global().async {
            try? store.writes.flush(store)
        }
        try await waitUntil("the flush that followed a write to finish, not deadlock") { flushedAgain.value }
        #expect(ledger.counts.written == 2)
        #expect(ledger.counts.writes == 2)
    }

    @Test func aReleasedOwnerWithPendingChangesIsKeptUntilTheyAreWritten() async throws {
        let ledger = WriteLedger()
        weak var weakStore: CountingStore?
        do {
            let store = CountingStore(ledger, delay: .milliseconds(50))
            weakStore = store
            store.change()
        }
        // Nobody holds the store but its scheduled write, which writes it, then lets it go.
        try await waitUntil { ledger.counts.written == 1 && weakStore == nil }
    }

    @Test func aScheduledWriteHoldsItsOwnerAndNothingElseDoes() {
        let ledger = WriteLedger()
        weak var weakStore: CountingStore?
        do {
            let store = CountingStore(ledger, delay: .seconds(3_600))
            weakStore = store
            store.change()
            // A scheduled write holds the store until it runs, an hour from now.
            #expect(store.writes.hasScheduledWrite)
        }
        #expect(weakStore != nil)
        do {
            let store = CountingStore(ledger, delay: .seconds(3_600))
            weakStore = store
        }
        #expect(weakStore == nil)
    }
}

/// What a ``CountingStore`` recorded and wrote; it outlives the store.
final class WriteLedger: Sendable {
    struct Failure: Error {}

    struct Counts {
        var recorded = 0
        var written = 0
        var writes = 0
        var failuresLeft = 0
        var holdsFirstWrite = false
        var isHolding = false
    }

    private let state: Mutex<Counts>
    private let release = DispatchSemaphore(value: 0)
    /// Run after each write that wrote something, once the scheduler's lock is released.
    let afterWrite = LockedValue<(@Sendable () -> Void)?>(nil)

    init(failures: Int = 0, holdingFirstWrite: Bool = false) {
        state = Mutex(Counts(failuresLeft: failures, holdsFirstWrite: holdingFirstWrite))
    }

    var counts: Counts { state.withLock { $0 } }
    var isHoldingWrite: Bool { state.withLock { $0.isHolding } }

    func record() {
        state.withLock { $0.recorded += 1 }
    }

    func releaseWrite() {
        release.signal()
    }

    /// Writes what was recorded; the first write, when asked, takes its changes and then waits
    /// for ``releaseWrite()``.
    func write() -> WriteScheduler<CountingStore>.Written {
        let (recorded, holds) = state.withLock { state in
            defer { state.holdsFirstWrite = false }
            state.isHolding = state.holdsFirstWrite
            return (state.recorded, state.holdsFirstWrite)
        }
        if holds {
            release.wait()
        }
        return state.withLock { state in
            state.isHolding = false
            guard state.written < recorded else { return WriteScheduler.Written() }
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                return WriteScheduler.Written(failure: Failure(), isPending: true)
            }
            state.written = recorded
            state.writes += 1
            return WriteScheduler.Written(afterwards: { [afterWrite] in afterWrite.value?() })
        }
    }
}

/// An owner of a scheduler, as a suite is.
final class CountingStore: Sendable {
    let ledger: WriteLedger
    let writes: WriteScheduler<CountingStore>

    init(
        _ ledger: WriteLedger, delay: Duration, retry: WriteScheduler<CountingStore>.Retry? = nil,
        onScheduledFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.ledger = ledger
        writes = WriteScheduler(
            delay: delay, retry: retry, write: { $0.ledger.write() },
            onScheduledFailure: { _, error in onScheduledFailure(error) })
    }

    func change() {
        ledger.record()
        writes.writeLater(self)
    }
}

/// A value shared with a closure that runs on another thread.
final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}
