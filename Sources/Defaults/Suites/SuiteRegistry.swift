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
            SuiteRegistry.flushAll(reportingTo: Defaults.logger)
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
    static func flushAll(reportingTo logger: Logger? = nil) -> [any Error] {
        var errors: [any Error] = []
        for suite in all {
            do {
                try suite.flush()
            } catch {
                logger?.error("\(error)")
                errors.append(error)
            }
        }
        return errors
    }
}

extension Defaults {
    /// Makes every value written so far in this process durable, in every suite.
    ///
    /// Pending writes are also flushed at normal process exit; call this before an exit the
    /// library cannot see, such as `_exit` or from your own signal handler.
    ///
    /// - Throws: ``SuiteErrors`` listing each suite that could not be flushed; the others are.
    public static func flushAll() throws {
        let errors = SuiteRegistry.flushAll()
        if !errors.isEmpty {
            throw SuiteErrors(errors: errors)
        }
    }
}
