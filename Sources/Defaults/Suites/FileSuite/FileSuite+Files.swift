import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What tells one version of a file from another without reading it. A writer that replaces the
/// file by renaming gives it a new inode; one that rewrites it in place changes its times or size.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modificationSeconds: Int
    var modificationNanoseconds: Int
    var changeSeconds: Int
    var changeNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modificationSeconds = Int(info.st_mtimespec.tv_sec)
        modificationNanoseconds = Int(info.st_mtimespec.tv_nsec)
        changeSeconds = Int(info.st_ctimespec.tv_sec)
        changeNanoseconds = Int(info.st_ctimespec.tv_nsec)
        #else
        modificationSeconds = Int(info.st_mtim.tv_sec)
        modificationNanoseconds = Int(info.st_mtim.tv_nsec)
        changeSeconds = Int(info.st_ctim.tv_sec)
        changeNanoseconds = Int(info.st_ctim.tv_nsec)
        #endif
    }
}

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

/// Thin wrappers over the POSIX calls the file suite needs, retrying on `EINTR`.
enum PosixFile {
    /// What is at a path when the suite reads it.
    enum Contents {
        case absent
        case file(FileIdentity, Data)
        case directory(FileIdentity)
    }

    static func isDirectory(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The identity of what is at `path`; `nil` when nothing is there.
    static func identity(at path: String) throws -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError("stat", path: path)
        }
        return FileIdentity(info)
    }

    /// Reads the whole file at `path`, with the identity of the exact version read (taken from
    /// the open descriptor, so a rename between the two cannot pair one version's identity with
    /// another's bytes).
    static func read(_ path: String) throws -> Contents {
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .absent }
            if code == EISDIR, let identity = try identity(at: path) { return .directory(identity) }
            throw SystemCallError("open", path: path, code: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError("fstat", path: path) }
        let identity = FileIdentity(info)
        if isDirectory(info) { return .directory(identity) }
        var data = Data(count: max(Int(info.st_size), 0))
        var count = 0
        while true {
            if count == data.count {
                // The file grew after fstat (a writer that does not rename); keep reading.
                data.count += max(4096, data.count / 2)
            }
            let result = data.withUnsafeMutableBytes { buffer in
                retrying { systemRead(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count) }
            }
            guard result >= 0 else {
                let code = errno
                if code == EISDIR { return .directory(identity) }
                throw SystemCallError("read", path: path, code: code)
            }
            if result == 0 { break }
            count += result
        }
        data.count = count
        return .file(identity, data)
    }

    /// Creates `path` and its missing parents with mode 0700.
    static func makeDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard isDirectory(info) else { throw SystemCallError("mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path {
            try makeDirectory(parent)
        }
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw SystemCallError("mkdir", path: path)
        }
    }

    /// Replaces `path` with `data` so that a crash at any moment leaves either the old or the new
    /// file, and returns only when the new one is durable: a temporary file in the same directory,
    /// `fsync`, `rename`, then `fsync` of the directory. Returns the new file's identity.
    static func writeAtomically(_ data: Data, to path: String, temporaryPath: String) throws -> FileIdentity {
        let fd = retrying { open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw SystemCallError("create", path: temporaryPath) }
        var isRenamed = false
        defer {
            if !isRenamed { unlink(temporaryPath) }
        }
        do {
            defer { close(fd) }
            // The mode given to open is filtered by the umask; Foundation's files are exactly 0600.
            guard fchmod(fd, 0o600) == 0 else { throw SystemCallError("fchmod", path: temporaryPath) }
            try writeAll(fd, data, path: temporaryPath)
            guard retrying({ fsync(fd) }) == 0 else { throw SystemCallError("fsync", path: temporaryPath) }
        }
        guard rename(temporaryPath, path) == 0 else { throw SystemCallError("rename", path: path) }
        isRenamed = true
        try syncDirectory(of: path)
        guard let identity = try identity(at: path) else { throw SystemCallError("stat", path: path, code: ENOENT) }
        return identity
    }

    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = retrying { write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset) }
                guard written > 0 else { throw SystemCallError("write", path: path, code: written == 0 ? EIO : errno) }
                offset += written
            }
        }
    }

    /// Makes a rename in the directory of `path` durable.
    static func syncDirectory(of path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = retrying { open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC | O_DIRECTORY) }
        guard fd >= 0 else { throw SystemCallError("open", path: directory) }
        defer { close(fd) }
        // Some file systems do not support fsync on a directory; the rename is then as durable as it gets.
        if retrying({ fsync(fd) }) != 0, errno != EINVAL, errno != ENOTSUP {
            throw SystemCallError("fsync", path: directory)
        }
    }

    static func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

// `read` is shadowed by `PosixFile.read(_:)` inside the enum.
@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
