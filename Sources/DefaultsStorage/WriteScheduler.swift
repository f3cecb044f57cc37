import Dispatch
import Synchronization

/// When a suite's changes reach its store: the one write scheduler of ``FileSuite`` and
/// ``UserDefaultsSuite``.
///
/// - **Coalescing**: the first change after a write schedules the next one after `delay`; the
///   changes made until it runs are written by it, so many writes share one.
/// - **Flushing**: ``flush(_:)`` writes at once, after waiting for a write in progress, and
///   returns when the owner's write has returned.
/// - **Lifetime**: a scheduled write holds its owner strongly, so a suite with changes not yet
///   written stays alive (and listed where ``Defaults/flushAll()`` and the termination-signal
///   handler find it) until they are written. Nothing is left to write when the owner is
///   released.
/// - **Failures**: a failed write is retried with a growing delay when `retry` is given; the
///   owner reports its own problems (see ``Written``), and a scheduled write that fails is also
///   passed to `onScheduledFailure` (a flush throws instead).
///
/// Writes run one at a time. The write lock is held only while the owner writes, not while it
/// reports what happened, so its problem handlers and observers may flush again.
package final class WriteScheduler<Owner: AnyObject & Sendable>: Sendable {
    /// How a failed write is tried again: after `first`, then twice as long each time, up to
    /// `longest`.
    public struct Retry: Sendable {
        public var first: Duration
        public var longest: Duration

        public init(first: Duration, longest: Duration) {
            self.first = first
            self.longest = longest
        }
    }

    /// What one write did.
    public struct Written {
        /// Why the write failed; `nil` when the data is written or there was nothing to write.
        public var failure: (any Error)?
        /// Whether changes are still waiting to be written (a failed write keeps them): when a
        /// `retry` is set, another try is scheduled.
        public var isPending: Bool
        /// What the owner does once the write lock is released: reports problems, posts changes.
        public var afterwards: () -> Void

        public init(failure: (any Error)? = nil, isPending: Bool = false, afterwards: @escaping () -> Void = {}) {
            self.failure = failure
            self.isPending = isPending
            self.afterwards = afterwards
        }
    }

    private let delay: Duration
    private let retry: Retry?
    private let write: @Sendable (Owner) -> Written
    private let onScheduledFailure: @Sendable (Owner, any Error) -> Void
    /// Whether a write is scheduled: read by every change, so an atomic rather than a lock.
    private let isScheduled = Atomic(false)
    /// The delay of the last retry, `nil` after a write that succeeded.
    private let retryDelay = Mutex<Duration?>(nil)
    /// Held while the owner writes: writes run one at a time, and a flush waits for one in progress.
    private let writing = Mutex(())

    /// - Parameters:
    ///   - delay: How long changes are collected before they are written together.
    ///   - retry: How a failed write is tried again; `nil` not to.
    ///   - write: Writes the owner's changes. It must not call out to code that may flush (that
    ///     belongs in ``Written/afterwards``).
    ///   - onScheduledFailure: Told of a scheduled write that failed.
    public init(
        delay: Duration, retry: Retry? = nil, write: @escaping @Sendable (Owner) -> Written,
        onScheduledFailure: @escaping @Sendable (Owner, any Error) -> Void = { _, _ in }
    ) {
        self.delay = delay
        self.retry = retry
        self.write = write
        self.onScheduledFailure = onScheduledFailure
    }

    /// Whether a write is scheduled and has not started yet.
    public var hasScheduledWrite: Bool {
        isScheduled.load(ordering: .acquiring)
    }

    /// Schedules a write of `owner`'s changes after the delay, unless one is scheduled and has not
    /// started (it will write them).
    ///
    /// Call it after recording the change where the write will find it: the scheduled write
    /// clears the mark before it writes, so a change recorded during a write schedules the next.
    public func writeLater(_ owner: Owner) {
        guard !isScheduled.load(ordering: .acquiring) else { return }
        schedule(owner, after: delay)
    }

    /// Writes `owner`'s changes now, after waiting for a write in progress, and returns when the
    /// owner's write has returned.
    ///
    /// - Throws: The write's failure; a retry is scheduled when one is set and changes remain.
    public func flush(_ owner: Owner) throws {
        if let failure = run(owner) {
            throw failure
        }
    }

    /// Schedules another try after a write that failed outside this scheduler (a transaction of
    /// the owner's), backing off, unless a write is scheduled already.
    public func retryLater(_ owner: Owner) {
        guard let retry else { return }
        let delay = retryDelay.withLock { last in
            let delay = last.map { min($0 * 2, retry.longest) } ?? retry.first
            last = delay
            return delay
        }
        schedule(owner, after: delay)
    }

    private func schedule(_ owner: Owner, after delay: Duration) {
        guard isScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        // From the first value waiting to be written on, `SIGTERM` and `SIGINT` flush before they
        // end the process; a program that never writes keeps its signals untouched.
        TerminationSignals.installIfDefault()
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            // Cleared before writing, so that a change made during the write schedules the next one.
            isScheduled.store(false, ordering: .sequentiallyConsistent)
            if let failure = run(owner) {
                onScheduledFailure(owner, failure)
            }
        }
    }

    /// Runs one write holding the write lock, then what follows it without; returns its failure.
    private func run(_ owner: Owner) -> (any Error)? {
        let written = writing.withLock { _ in write(owner) }
        if written.failure == nil {
            retryDelay.withLock { $0 = nil }
        } else if written.isPending {
            retryLater(owner)
        }
        written.afterwards()
        return written.failure
    }
}
