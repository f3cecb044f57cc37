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
enum BoundedFileRead {
    /// What was found at the path.
    enum Outcome {
        case absent
        /// The whole file, with the identity of the exact version read (taken from the open
        /// descriptor, so that a rename between the two cannot pair one version's identity with
        /// another's bytes).
        case file(FileIdentity, Data)
        /// A directory, FIFO, device or socket; `kind` names it for messages.
        case notRegularFile(FileIdentity, kind: String)
        /// A regular file larger than the limit; not read.
        case tooLarge(FileIdentity)
    }

    /// The largest suite file read: far more than settings need, far less than memory.
    static let sizeLimit = 64 << 20

    /// Reads the file at `path` (following a link, as dotfiles kept in a repository are linked).
    static func read(_ path: String, limit: Int = sizeLimit) throws -> Outcome {
        let fd = PosixFile.retrying { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
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
        guard info.st_size <= limit else { return .tooLarge(identity) }
        // The descriptor was opened non-blocking for the FIFO case; a regular file reads the same.
        // One byte more than its size, so that the read that finds the end needs no larger buffer
        // (growing copies the file into an allocation half as large again).
        var data = Data(count: max(Int(info.st_size), 0) + 1)
        var count = 0
        while true {
            if count == data.count {
                // The file grew after fstat (a writer that does not rename); keep reading, within the limit.
                guard count < limit + 1 else { return .tooLarge(identity) }
                data.count = min(count + max(4096, count / 2), limit + 1)
            }
            let result = data.withUnsafeMutableBytes { buffer in
                PosixFile.retrying { systemRead(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count) }
            }
            guard result >= 0 else { throw SystemCallError("read", path: path) }
            if result == 0 { break }
            count += result
        }
        guard count <= limit else { return .tooLarge(identity) }
        data.count = count
        return .file(identity, data)
    }
}

// `read` is shadowed by `BoundedFileRead.read(_:limit:)` inside the enum.
@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
