import Foundation
import Logging

/// What storage needs of the process, kept below the typed API so that no suite reaches up for
/// it: the library's logger, the standard suite's name, and whether this process's observers are
/// told of changes. `Defaults.logger`, `Defaults.standardSuiteName` and
/// `Defaults.withoutPropagation` are these, as the public API spells them.
package enum StorageEnvironment {
    /// The library's logger: problems it handles itself.
    package static let logger = Logger(label: "swift-defaults")

    /// The name Foundation gives the standard suite of this process: the bundle identifier, or
    /// the process name where there is no bundle.
    package static var standardSuiteName: String {
        Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    }

    /// Set while changes are not told to this process's observers (a task-local value: the code
    /// a closure runs on the calling thread, not other threads' changes meanwhile).
    @TaskLocal package static var isPropagationSuppressed = false

    /// Runs `closure` without telling any observer of this process about the changes it makes.
    package static func withoutPropagation<Result>(_ closure: () throws -> Result) rethrows -> Result {
        try $isPropagationSuppressed.withValue(true, operation: closure)
    }
}
