import Dispatch
import Foundation
import Logging
import Synchronization

/// Ends the process when a stop outlasts its limits, rather than let it hang for ever (seen
/// twice, with no socket left and every thread idle).
///
/// After a graceful stop's ``SyncServer/longestGracefulStop`` `ServiceGroup` cancels the
/// instance's work, saying so only at debug level: this logs it. When cancelled work, whether
/// by that limit or because a service failed, still runs ``SyncServer/longestCancelledStop``
/// later, this logs that too and exits with status 1. Its timers are Dispatch's, so that work
/// holding every thread of Swift's pool cannot hold them too.
final class StopWatchdog: Sendable {
    private let logger: Logger
    /// Moved on by ``cancel()``: a timer of an earlier count does nothing.
    private let count = Atomic<Int>(0)

    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts counting: the graceful stop began.
    func stopBegan() {
        let logger = logger
        schedule(after: SyncServer.longestGracefulStop) {
            logger.warning("the stop has taken \(SyncServer.longestGracefulStop): cancelling what still runs")
        }
        scheduleExit(after: SyncServer.longestGracefulStop + SyncServer.longestCancelledStop)
    }

    /// Starts counting: the instance's work was cancelled without a graceful stop (a service
    /// failed).
    func workCancelled() {
        scheduleExit(after: SyncServer.longestCancelledStop)
    }

    /// Stops counting: the stop ended.
    func cancel() {
        count.add(1, ordering: .sequentiallyConsistent)
    }

    private func scheduleExit(after delay: Duration) {
        let logger = logger
        schedule(after: delay) {
            logger.error("the stop has not ended \(SyncServer.longestCancelledStop) after it was cancelled: exiting")
            // Not `exit`: its handlers could wait on what hangs.
            fflush(nil)
            _exit(1)
        }
    }

    private func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let scheduled = count.load(ordering: .sequentiallyConsistent)
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            if count.load(ordering: .sequentiallyConsistent) == scheduled { body() }
        }
    }
}
