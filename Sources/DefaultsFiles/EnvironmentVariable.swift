#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One variable of the process's environment, read alone: `ProcessInfo.environment` builds a
/// dictionary of every variable at each call, which cost a program's start a few hundred
/// thousand instructions for each of the three variables a suite reads as it opens.
package enum EnvironmentVariable {
    /// The value of `name`, or `nil` when it is unset.
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
