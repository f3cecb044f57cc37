#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, with the path it was about.
package struct SystemCallError: Error, CustomStringConvertible {
    package var operation: String
    package var path: String
    package var code: Int32

    package init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    package var description: String {
        "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
    }
}
