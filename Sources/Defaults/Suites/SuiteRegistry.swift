import Foundation
import Logging
import Synchronization

/// Every suite opened in this process that may hold data not yet on disk, so that
/// ``Defaults/flushAll()`` and the exit handler reach them all.
enum SuiteRegistry {
    private struct WeakSuite {
        weak var suite: (any DefaultsSuite)?
    }

    private static let suites = Mutex<[WeakSuite]>([])
    private static let installExitHandler: Void = {
        atexit {
            // The logger is made only for an error: making it at every exit costs a program's end.
            for error in SuiteRegistry.flushAll() {
                StorageEnvironment.logger.error("\(error)")
            }
        }
    }()

    static func add(_ suite: any DefaultsSuite) {
        _ = installExitHandler
        suites.withLock { suites in
            suites.removeAll { $0.suite == nil }
            suites.append(WeakSuite(suite: suite))
        }
    }

    static var all: [any DefaultsSuite] {
        suites.withLock { $0.compactMap(\.suite) }
    }

    @discardableResult
    static func flushAll(reportingTo logger: Logger? = nil) -> [DefaultsError] {
        var errors: [DefaultsError] = []
        for suite in all {
            do {
                try suite.flush()
            } catch {
                logger?.error("\(error)")
                // A suite of the program's own may throw an error of its own: keep it as the cause.
                errors.append(
                    error as? DefaultsError
                        ?? DefaultsError(
                            suite: suite.name, kind: .writeFailed, message: "\(error)", underlyingError: error)
                )
            }
        }
        return errors
    }
}
