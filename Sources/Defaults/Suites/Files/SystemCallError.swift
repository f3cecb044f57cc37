#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, with the path it was about.
struct SystemCallError: Error, CustomStringConvertible {
    var operation: String
    var path: String
    var code: Int32

    init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    var description: String {
        "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
    }
}
