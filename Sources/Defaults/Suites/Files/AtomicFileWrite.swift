import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the file layer will not touch what is at a path, in words for a message.
@_spi(Files) public struct FileRefusal: Error, CustomStringConvertible {
    public var description: String
}

/// Replacing a file so that a crash at any moment leaves either the old or the new version, in a
/// directory other users may be able to write: the temporary file has a name no one can guess and
/// is created with `O_EXCL | O_NOFOLLOW`, so a planted file or link is never written through.
enum AtomicFileWrite {
    /// The file a write of `path` replaces: `path` itself, or, when `path` is a link (a dotfile
    /// kept in a repository and linked into place), the file it points to, replaced in its own
    /// directory so that the link keeps working. A link is followed only to a regular file the
    /// user owns, or to a missing file in an existing directory.
    static func target(of path: String) throws -> String {
        guard let info = try PosixFile.linkStatus(path) else { return path }
        switch PosixFile.fileType(info) {
        case S_IFREG:
            return path
        case S_IFLNK:
            break
        default:
            throw FileRefusal(description: "\(path) is not a regular file; it is left in place")
        }
        guard let resolved = realpath(path, nil) else {
            guard errno == ENOENT, let destination = linkDestination(path),
                let parent = try PosixFile.linkStatus((destination as NSString).deletingLastPathComponent),
                PosixFile.fileType(parent) == S_IFDIR
            else {
                throw FileRefusal(description: "\(path) is a link that cannot be followed; it is left in place")
            }
            // A link to a file not created yet (a fresh checkout of dotfiles): create it there.
            return destination
        }
        defer { free(resolved) }
        let target = String(cString: resolved)
        guard let targetInfo = try PosixFile.linkStatus(target), PosixFile.fileType(targetInfo) == S_IFREG else {
            throw FileRefusal(
                description: "\(path) is a link to \(target), which is not a regular file; it is left in place")
        }
        guard targetInfo.st_uid == geteuid() else {
            throw FileRefusal(
                description: "\(path) is a link to \(target), which belongs to another user; it is not written")
        }
        return target
    }

    /// Where the link at `path` points, made absolute against the link's directory.
    private static func linkDestination(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let destination = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if destination.hasPrefix("/") { return destination }
        return ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(destination)
    }

    /// The prefix of the temporary files of writes to `target`; the writer's process ID, `-`
    /// and a random suffix follow.
    static func temporaryPrefix(for target: String) -> String {
        "." + (target as NSString).lastPathComponent + ".tmp-"
    }

    /// Replaces `target` with `data` and returns only when the new file is durable: a temporary
    /// file in the same directory, `fsync`, `rename`, then `fsync` of the directory. Returns the
    /// new file's identity.
    static func write(_ data: Data, to target: String) throws -> FileIdentity {
        let directory = (target as NSString).deletingLastPathComponent
        var temporaryPath = ""
        var fd: Int32 = -1
        for _ in 0..<8 {
            temporaryPath = (directory as NSString).appendingPathComponent(
                temporaryPrefix(for: target) + "\(getpid())-" + PosixFile.randomSuffix())
            fd = PosixFile.retrying {
                open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            }
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw SystemCallError("create", path: temporaryPath) }
        var isRenamed = false
        defer {
            if !isRenamed { unlink(temporaryPath) }
        }
        do {
            defer { close(fd) }
            // The mode given to open is filtered by the umask; Foundation's files are exactly 0600.
            guard fchmod(fd, 0o600) == 0 else { throw SystemCallError("fchmod", path: temporaryPath) }
            try PosixFile.writeAll(fd, data, path: temporaryPath)
            guard PosixFile.retrying({ fsync(fd) }) == 0 else { throw SystemCallError("fsync", path: temporaryPath) }
        }
        guard rename(temporaryPath, target) == 0 else { throw SystemCallError("rename", path: target) }
        isRenamed = true
        try PosixFile.syncDirectory(of: target)
        // Taken after the rename, which changes the file's status-change time.
        guard let identity = try PosixFile.identity(at: target) else {
            throw SystemCallError("stat", path: target, code: ENOENT)
        }
        return identity
    }

    /// Removes temporary files left by writers of `target` that died mid-write (killed before
    /// their rename). Call it holding the file's lock, so that no live writer's file is taken.
    static func removeStaleTemporaryFiles(for target: String) {
        let directory = (target as NSString).deletingLastPathComponent
        let prefix = temporaryPrefix(for: target)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let owner = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let processID = Int32(owner) else { continue }
            if processID != getpid(), kill(processID, 0) != 0, errno == ESRCH {
                // unlink removes a link itself, never what it points to.
                unlink((directory as NSString).appendingPathComponent(name))
            }
        }
    }
}
