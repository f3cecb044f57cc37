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
                Defaults.logger.error("\(error)")
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

extension Defaults {
    /// Makes every value written so far in this process durable, in every suite.
    ///
    /// Pending writes are also flushed at normal process exit; call this before an exit the
    /// library cannot see, such as `_exit` or from your own signal handler.
    ///
    /// - Throws: ``DefaultsError``: the suite's error when one suite could not be flushed, or a
    ///   ``DefaultsError/Kind/multiple`` error with each suite's error in
    ///   ``DefaultsError/causes``. The other suites are flushed.
    public static func flushAll() throws(DefaultsError) {
        let errors = SuiteRegistry.flushAll()
        if !errors.isEmpty {
            throw DefaultsError(combining: errors, message: "\(errors.count) suites could not be flushed")
        }
    }
}
