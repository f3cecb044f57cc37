import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the file layer needs, retrying on `EINTR`.
package enum PosixFile {
    package static func fileType(_ info: stat) -> mode_t {
        info.st_mode & S_IFMT
    }

    /// The identity of what `path` names, following links; `nil` when nothing is there.
    package static func identity(at path: String) throws -> FileIdentity? {
        try status(path).map(FileIdentity.init)
    }

    /// What `path` names, following links; `nil` when nothing is there.
    package static func status(_ path: String) throws -> stat? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError("stat", path: path)
        }
        return info
    }

    /// What `path` itself is, without following a link; `nil` when nothing is there.
    package static func linkStatus(_ path: String) throws -> stat? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemCallError("lstat", path: path)
        }
        return info
    }

    /// Creates `path` and its missing parents with mode 0700.
    package static func makeDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard fileType(info) == S_IFDIR else { throw SystemCallError("mkdir", path: path, code: ENOTDIR) }
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

    package static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = retrying { write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset) }
                guard written > 0 else { throw SystemCallError("write", path: path, code: written == 0 ? EIO : errno) }
                offset += written
            }
        }
    }

    /// Makes a rename or removal in the directory of `path` durable.
    package static func syncDirectory(of path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = retrying { open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC | O_DIRECTORY) }
        guard fd >= 0 else { throw SystemCallError("open", path: directory) }
        defer { close(fd) }
        try sync(directory: fd, path: directory)
    }

    /// Makes a rename or removal in the open directory `fd` (at `path`, for messages) durable.
    package static func sync(directory fd: Int32, path: String) throws {
        // Some file systems do not support fsync on a directory; the rename is then as durable as it gets.
        if retrying({ fsync(fd) }) != 0, errno != EINVAL, errno != ENOTSUP {
            throw SystemCallError("fsync", path: path)
        }
    }

    /// 16 random hexadecimal digits, for names another user cannot guess in advance.
    package static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    package static func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
