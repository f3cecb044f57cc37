import Foundation
import Synchronization

/// A hybrid logical clock: the wall time, made monotonic and pushed forward by every timestamp seen
/// from other machines.
///
/// A machine whose clock runs behind still stamps its new changes after every change it has seen,
/// so it cannot lose a newer value to an older one, nor have its own newer changes lost.
///
/// ```swift
/// let clock = HybridLogicalClock(origin: "host-a")
/// let first = clock.now()
/// clock.receive(SyncTimestamp(wallTime: first.wallTime + 60_000, counter: 0, origin: "host-b"))
/// assert(clock.now().wallTime == first.wallTime + 60_000)  // after what it saw
/// ```
///
/// The sync engine makes its own; tests give it one whose wall clock runs behind or ahead, with
/// `Defaults.iCloud.use(_:clock:)`.
package final class HybridLogicalClock: Sendable {
    /// Identifies this clock's changes; unique per syncing process unless given.
    public let origin: String
    private let wallClock: @Sendable () -> Date
    /// The latest timestamp given or received, in this clock's name.
    private let last: Mutex<SyncTimestamp>

    /// Creates a clock.
    ///
    /// - Parameters:
    ///   - origin: ASCII, without `.`; a random identifier unless given.
    ///   - wallClock: The physical clock; tests inject one that runs behind or ahead.
    public init(
        origin: String = UUID().uuidString.lowercased(),
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        let origin = origin.filter { $0.isASCII && $0 != "." }
        self.origin = origin
        self.wallClock = wallClock
        self.last = Mutex(.unknown(origin: origin))
    }

    /// The physical clock's time.
    var date: Date { wallClock() }

    /// The physical clock's time in milliseconds, as timestamps carry it.
    var physicalTime: Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A new timestamp for a local change: later than every timestamp this clock gave or received.
    public func now() -> SyncTimestamp {
        let physical = physicalTime
        return last.withLock { last in
            if physical > last.wallTime {
                last = SyncTimestamp(wallTime: physical, counter: 0, origin: origin)
            } else if let next = last.successor(origin: origin) {
                last = next
            }
            // Else a received stamp holds the largest version there is: the clock stays at it
            // (its changes then tie, and lose or win by origin) rather than trap.
            return last
        }
    }

    /// Takes in a timestamp seen from elsewhere, so that the next ``now()`` is after it; not one
    /// further ahead of this clock than clocks disagree (`WireVersion.isTooFarAhead(of:)`), which
    /// no change should carry and which would set every later change near the end of time.
    public func receive(_ timestamp: SyncTimestamp) {
        guard !timestamp.version.isTooFarAhead(of: physicalTime) else { return }
        last.withLock { last in
            // By the one order of versions. At the same wall time and counter, whatever the
            // origins, the next `now()` counts up and so is after both.
            if timestamp > last {
                last = SyncTimestamp(wallTime: timestamp.wallTime, counter: timestamp.counter, origin: origin)
            }
        }
    }
}
