import Foundation
import Logging
import Synchronization

/// Every suite opened in this process that may hold data not yet on disk, so that
/// ``Defaults/flushAll()`` and the exit handler reach them all.
package enum SuiteRegistry {
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

    package static var all: [any DefaultsSuite] {
        suites.withLock { $0.compactMap(\.suite) }
    }

    private static let flushHooks = Mutex<(next: Int, hooks: [Int: @Sendable () -> [DefaultsError]])>((0, [:]))

    /// Adds work that ``flushAll(reportingTo:)`` (and so the exit handler, the termination
    /// signals and ``Defaults/flushAll()``) runs before flushing the suites: what must be durable
    /// before their files (a sync engine's journals). It returns what it could not make durable.
    /// Registered from above; returns the hook's identifier for ``removeFlushHook(_:)``.
    package static func addFlushHook(_ hook: @escaping @Sendable () -> [DefaultsError]) -> Int {
        _ = installExitHandler
        return flushHooks.withLock { registered in
            defer { registered.next += 1 }
            registered.hooks[registered.next] = hook
            return registered.next
        }
    }

    package static func removeFlushHook(_ id: Int) {
        _ = flushHooks.withLock { $0.hooks.removeValue(forKey: id) }
    }

    @discardableResult
    package static func flushAll(reportingTo logger: Logger? = nil) -> [DefaultsError] {
        var errors: [DefaultsError] = []
        for hook in flushHooks.withLock({ $0.hooks.sorted { $0.key < $1.key }.map(\.value) }) {
            for error in hook() {
                logger?.error("\(error)")
                errors.append(error)
            }
        }
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
