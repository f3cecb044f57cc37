import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading a file that may be hostile: whatever is at the path is opened without blocking (a FIFO
/// would otherwise wait for a writer forever), checked to be a regular file on the descriptor
/// itself, and read only up to a size limit (a link to `/dev/zero` never ends).
package enum BoundedFileRead {
    /// What was found at the path.
    package enum Outcome {
        case absent
        /// The whole file, with the identity of the exact version read (taken from the open
        /// descriptor, so that a rename between the two cannot pair one version's identity with
        /// another's bytes).
        case file(FileIdentity, Data)
        /// A directory, FIFO, device or socket; `kind` names it for messages.
        case notRegularFile(FileIdentity, kind: String)
        /// A regular file larger than the limit; not read.
        case tooLarge(FileIdentity)
        /// A regular file whose owner or mode the ownership rule refuses; not read.
        case untrusted(FileIdentity, reason: String)
    }

    /// The largest suite file read: far more than settings need, far less than memory.
    package static let sizeLimit = 64 << 20

    /// Reads the file at `path`, following a link unless `followingLinks` is false (then a link
    /// there is an error: `ELOOP`), and only if its owner and mode pass `ownership` (when given).
    package static func read(
        _ path: String, limit: Int = sizeLimit, followingLinks: Bool = true, ownership: FileOwnership? = nil
    ) throws -> Outcome {
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW)
        let fd = PosixFile.retrying { open(path, flags) }
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .absent }
            if code == ENXIO, let identity = try PosixFile.identity(at: path) {
                // A socket, or a FIFO on a system that refuses to open it this way.
                return .notRegularFile(identity, kind: "a socket or FIFO")
            }
            throw SystemCallError("open", path: path, code: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("fstat", path: path) }
        let identity = FileIdentity(info)
        switch PosixFile.fileType(info) {
        case S_IFREG: break
        case S_IFDIR: return .notRegularFile(identity, kind: "a directory")
        case S_IFIFO: return .notRegularFile(identity, kind: "a FIFO")
        case S_IFCHR, S_IFBLK: return .notRegularFile(identity, kind: "a device")
        default: return .notRegularFile(identity, kind: "not a regular file")
        }
        if let reason = ownership?.refusal(of: info) {
            return .untrusted(identity, reason: reason)
        }
        guard info.st_size <= limit else { return .tooLarge(identity) }
        // The file may grow after fstat (a writer that does not rename): read to its end all the same.
        guard let data = try readAll(fd, limit: limit, expectedSize: Int(info.st_size), path: path) else {
            return .tooLarge(identity)
        }
        return .file(identity, data)
    }

    /// Reads `fd` to its end, or returns `nil` as soon as it holds more than `limit` bytes.
    /// `expectedSize` is where to start (a file's size); a pipe or a growing file reads on past it.
    package static func readAll(_ fd: Int32, limit: Int, expectedSize: Int = 0, path: String) throws -> Data? {
        // One byte more than the expected size, so that the read that finds the end needs no larger
        // buffer (growing copies the file into an allocation half as large again). Not zeroed
        // (`Data(count:)` would be): only the bytes `read` wrote are kept.
        var capacity = min(max(expectedSize, 0) + 1, limit + 1)
        guard var buffer = malloc(capacity) else { throw SystemCallError("malloc", path: path, code: ENOMEM) }
        var count = 0
        while true {
            if count == capacity {
                guard count <= limit else {
                    free(buffer)
                    return nil
                }
                capacity = min(count + max(4096, count / 2), limit + 1)
                guard let grown = realloc(buffer, capacity) else {
                    free(buffer)
                    throw SystemCallError("realloc", path: path, code: ENOMEM)
                }
                buffer = grown
            }
            let result = PosixFile.retrying { [buffer, count, capacity] in
                systemRead(fd, buffer + count, capacity - count)
            }
            guard result >= 0 else {
                let error = SystemCallError("read", path: path)
                free(buffer)
                throw error
            }
            if result == 0 { break }
            count += result
        }
        return Data(bytesNoCopy: buffer, count: count, deallocator: .free)
    }

    /// Why a file of more than `limit` bytes is not read, in words for a message.
    package static func tooLargeReason(limit: Int = sizeLimit) -> String {
        "it is larger than " + (limit >= 1 << 20 ? "\(limit >> 20) MB" : "\(limit) bytes")
    }

    /// Reads a file a user gives as input (`defaults import domain FILE`), `-` meaning standard
    /// input: a regular file at a path (never a FIFO that would wait for a writer, nor a device
    /// that never ends), and from standard input, whatever it is, never more than `limit` bytes.
    ///
    /// - Throws: An error whose description says why, in words for a message.
    package static func readInput(_ source: String, limit: Int = sizeLimit) throws -> Data {
        let tooLarge = FileRefusal(description: tooLargeReason(limit: limit))
        if source == "-" {
            guard let data = try readAll(STDIN_FILENO, limit: limit, path: "standard input") else { throw tooLarge }
            return data
        }
        switch try read(source, limit: limit) {
        case .absent: throw SystemCallError("open", path: source, code: ENOENT)
        case .notRegularFile(_, let kind): throw FileRefusal(description: "\(source) is \(kind), not a regular file")
        case .tooLarge: throw tooLarge
        case .untrusted(_, let reason): throw FileRefusal(description: "\(source) is not read: \(reason)")
        case .file(_, let data): return data
        }
    }
}

// `read` is shadowed by `BoundedFileRead.read(_:limit:)` inside the enum.
@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
