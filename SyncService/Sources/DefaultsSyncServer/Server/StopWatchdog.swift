import Foundation
import Logging
import Synchronization

/// Ends the process when a graceful stop outlasts its limits, rather than let it hang for ever
/// (seen twice, with no socket left and every thread idle). `ServiceGroup` cancels the instance's
/// work after ``SyncServer/longestGracefulStop``, saying so only at debug level: this logs it,
/// and when the cancelled work is still running ``SyncServer/longestCancelledStop`` later, logs
/// that too and exits with status 1.
final class StopWatchdog: Sendable {
    private let logger: Logger
    private let watching = Mutex<Task<Void, Never>?>(nil)

    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts counting: the graceful stop began.
    func stopBegan() {
        let logger = logger
        let task = Task.detached {
            guard (try? await Task.sleep(for: SyncServer.longestGracefulStop)) != nil else { return }
            logger.warning(
                "the stop has taken \(SyncServer.longestGracefulStop): cancelling what still runs")
            guard (try? await Task.sleep(for: SyncServer.longestCancelledStop)) != nil else { return }
            logger.error(
                "the stop has not ended \(SyncServer.longestCancelledStop) after it was cancelled: exiting")
            exit(1)
        }
        watching.withLock { watching in
            watching?.cancel()
            watching = task
        }
    }

    /// Stops counting: the stop ended.
    func cancel() {
        watching.withLock { watching in
            watching?.cancel()
            watching = nil
        }
    }
}
