import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a secret from a file the way a secret must be read: a regular file, never through a
/// link nor a FIFO, and no more than a limit; and, as OpenSSH does with a private key, only a file
/// that no one else can read or change: no permission for group or others, owned by the user the
/// server runs as (or root).
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
        // Judged on the file opened (fstat), not on the name, which could be swapped meanwhile.
        let permissions = status.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            throw Problem(
                description:
                    "it is readable or writable by group or others (mode \(String(format: "%04o", permissions))); "
                    + "a secret key must not be: chmod 600 it")
        }
        guard status.st_uid == geteuid() || status.st_uid == 0 else {
            throw Problem(
                description: "it is owned by user id \(status.st_uid), neither this server's user (\(geteuid())) "
                    + "nor root")
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
