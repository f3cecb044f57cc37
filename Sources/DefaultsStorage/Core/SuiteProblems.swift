import Foundation
import Logging
import Synchronization

/// What a suite met and could not do, kept for ``FileSuite/problems`` and told to its handler and
/// ``Defaults/logger``: one for each suite, of every type, so that a problem is reported the same
/// way whichever suite or door met it.
final class SuiteProblems: Sendable {
    /// The most problems kept; older ones are dropped.
    static let limit = 100

    private let kept = Mutex<[DefaultsError]>([])
    private let handler = Mutex<(@Sendable (DefaultsError) -> Void)?>(nil)

    /// The problems met so far, oldest first.
    var all: [DefaultsError] { kept.withLock { $0 } }

    var onProblem: (@Sendable (DefaultsError) -> Void)? {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }

    /// Keeps `problems`, without telling anyone yet.
    func record(_ problems: [DefaultsError]) {
        guard !problems.isEmpty else { return }
        kept.withLock { kept in
            kept += problems
            if kept.count > Self.limit {
                kept.removeFirst(kept.count - Self.limit)
            }
        }
    }

    /// Logs `problem` and calls the handler. Called with no suite lock held, so that the handler
    /// may flush, reload or write the suite.
    func announce(_ problem: DefaultsError) {
        var metadata: Logger.Metadata = ["kind": "\(problem.kind)"]
        if let suite = problem.suite {
            metadata["suite"] = "\(suite)"
        }
        if let backupURL = problem.backupURL {
            metadata["backup"] = "\(backupURL.path)"
        }
        StorageEnvironment.logger.error("\(problem.message)", metadata: metadata)
        handler.withLock { $0 }?(problem)
    }

    func report(_ problem: DefaultsError) {
        record([problem])
        announce(problem)
    }
}

extension DefaultsSuite {
    /// Reports `problem` through the suite's problems when it keeps them, else to the log.
    package func reportProblem(_ problem: DefaultsError) {
        backend.report(problem)
    }
}
