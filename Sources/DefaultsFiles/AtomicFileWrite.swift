import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the file layer will not touch what is at a path, in words for a message.
package struct FileRefusal: Error, CustomStringConvertible {
    package var description: String
}

/// Replacing a file so that a crash at any moment leaves either the old or the new version, in a
/// directory other users may be able to write: the temporary file has a name no one can guess and
/// is created with `O_EXCL | O_NOFOLLOW`, so a planted file or link is never written through.
package enum AtomicFileWrite {
    /// The file a write of `path` replaces: `path` itself, or, when `path` is a link (a dotfile
    /// kept in a repository and linked into place), the file at the end of its chain of links,
    /// replaced in its own directory so that the links keep working.
    ///
    /// Links are followed as ``endOfLinks(_:)`` does. The end of the chain must be a regular file
    /// the user owns, or a missing file in a directory the user owns, and the directories above it
    /// the user's or root's (``FileOwnership``).
    package static func target(of path: String) throws -> String {
        let (end, info) = try endOfLinks(path)
        try FileOwnership.user.checkDirectories(above: end)
        guard end != path else {
            if let info, PosixFile.fileType(info) != S_IFREG {
                throw FileRefusal(description: "\(path) is not a regular file; it is left in place")
            }
            return path
        }
        guard let info else {
            // A link to a file not created yet (a fresh checkout of dotfiles): create it there.
            let parent = (end as NSString).deletingLastPathComponent
            guard let parentInfo = try PosixFile.status(parent.isEmpty ? "." : parent),
                PosixFile.fileType(parentInfo) == S_IFDIR, parentInfo.st_uid == geteuid()
            else {
                throw FileRefusal(
                    description:
                        "\(path) is a link to \(end), which is missing and not in a directory of the user's; it is left in place"
                )
            }
            return end
        }
        guard PosixFile.fileType(info) == S_IFREG else {
            throw FileRefusal(
                description: "\(path) is a link to \(end), which is not a regular file; it is left in place")
        }
        guard info.st_uid == geteuid() else {
            throw FileRefusal(
                description: "\(path) is a link to \(end), which belongs to another user; it is not written")
        }
        return end
    }

    /// Follows the chain of links at `path` to its end: what is not a link, or nothing. Returns
    /// the end and what is there, without following it.
    ///
    /// A link is followed only if the user made it (owns it): a link another user planted in a
    /// shared directory is refused, even to a file of the user's, for reading as for writing.
    package static func endOfLinks(_ path: String) throws -> (path: String, info: stat?) {
        var current = path
        // The kernel's own limit on links in a chain (ELOOP).
        for _ in 0..<40 {
            guard let info = try PosixFile.linkStatus(current) else { return (current, nil) }
            guard PosixFile.fileType(info) == S_IFLNK else { return (current, info) }
            guard info.st_uid == geteuid() else {
                throw FileRefusal(
                    description: "\(current) is a link made by another user; it is not followed, and left in place")
            }
            guard let destination = linkDestination(current) else {
                throw FileRefusal(description: "\(path) is a link that cannot be followed; it is left in place")
            }
            current = destination
        }
        throw FileRefusal(description: "\(path) is a chain of too many links; it is left in place")
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
    package static func temporaryPrefix(for target: String) -> String {
        "." + (target as NSString).lastPathComponent + ".tmp-"
    }

    /// Replaces `target` with `data` and returns only when the new file is durable: a temporary
    /// file in the same directory, written and `fsync`ed, renamed over `target`, then an `fsync`
    /// of the directory (the rename is a change of the directory: without it a crash may bring
    /// the old file back after the flush returned). Returns the new file's identity.
    ///
    /// Every step names the file relative to one descriptor of the directory, opened first, so
    /// that all of them act on the same directory even if its path changes meanwhile, and none
    /// resolves the path again. The identity is taken after the rename from a descriptor of the
    /// written file: the version this write made, never one another writer put there since. That
    /// descriptor is read-only, and the written one is closed before the rename, so that watchers
    /// see one event for the write (the rename), not also a close-after-write under the file's name.
    ///
    /// `beforeRename` is given the written file's identity just before it is renamed into place
    /// (the rename changes only its status-change time), so that watchers of the directory can
    /// tell this write's event from another writer's before the write returns.
    package static func write(
        _ data: Data, to target: String, beforeRename: (FileIdentity) -> Void = { _ in }
    ) throws -> FileIdentity {
        let directory = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        let directoryFD = PosixFile.retrying {
            open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard directoryFD >= 0 else { throw SystemCallError("open", path: directory) }
        defer { close(directoryFD) }
        var temporaryName = ""
        var fd: Int32 = -1
        for _ in 0..<8 {
            temporaryName = temporaryPrefix(for: target) + "\(getpid())-" + PosixFile.randomSuffix()
            fd = PosixFile.retrying {
                openat(directoryFD, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            }
            if fd >= 0 || errno != EEXIST { break }
        }
        let temporaryPath = (directory as NSString).appendingPathComponent(temporaryName)
        guard fd >= 0 else { throw SystemCallError("create", path: temporaryPath) }
        var isRenamed = false
        defer {
            if !isRenamed { unlinkat(directoryFD, temporaryName, 0) }
        }
        let writtenFD: Int32
        do {
            defer { close(fd) }
            // The mode given to open is filtered by the umask; Foundation's files are exactly 0600.
            guard fchmod(fd, 0o600) == 0 else { throw SystemCallError("fchmod", path: temporaryPath) }
            try PosixFile.writeAll(fd, data, path: temporaryPath)
            guard PosixFile.retrying({ fsync(fd) }) == 0 else {
                throw SystemCallError("fsync", path: temporaryPath)
            }
            // Opened while the written descriptor is, and checked to be the same file.
            writtenFD = PosixFile.retrying { openat(directoryFD, temporaryName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
            guard writtenFD >= 0 else { throw SystemCallError("open", path: temporaryPath) }
            var written = stat()
            var reopened = stat()
            guard fstat(fd, &written) == 0, fstat(writtenFD, &reopened) == 0,
                FileIdentity(written).isSameFile(as: FileIdentity(reopened))
            else {
                close(writtenFD)
                throw FileRefusal(
                    description: "\(temporaryPath) was replaced while it was written; nothing was renamed")
            }
            beforeRename(FileIdentity(written))
        }
        defer { close(writtenFD) }
        guard renameat(directoryFD, temporaryName, directoryFD, name) == 0 else {
            throw SystemCallError("rename", path: target)
        }
        isRenamed = true
        try PosixFile.sync(directory: directoryFD, path: directory)
        // Taken after the rename, which changes the file's status-change time.
        var info = stat()
        guard fstat(writtenFD, &info) == 0 else { throw SystemCallError("fstat", path: target) }
        return FileIdentity(info)
    }

    /// Removes temporary files left by writers of `target` that died mid-write (killed before
    /// their rename). Call it holding the file's lock, so that no live writer's file is taken.
    package static func removeStaleTemporaryFiles(for target: String) {
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
