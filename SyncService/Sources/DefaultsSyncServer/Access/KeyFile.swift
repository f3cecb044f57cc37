import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a secret from a file the way a secret must be read: a regular file, never through a
/// link nor a FIFO, and no more than a limit.
enum KeyFile {
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    static func read(_ path: String, limit: Int) throws(Problem) -> Data {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Problem(description: String(cString: strerror(errno))) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw Problem(description: "not a regular file")
        }
        guard Int(status.st_size) <= limit else {
            throw Problem(description: "larger than \(limit) bytes")
        }
        var data = Data(count: Int(status.st_size) + 1)
        let count = data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0, count <= Int(status.st_size) else { throw Problem(description: "it changed while read") }
        return data.prefix(count)
    }
}
