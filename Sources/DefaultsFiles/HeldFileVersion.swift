#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One version of a file, held open: while it is, its inode cannot become another file's (a
/// writer that replaces the file by renaming frees the old inode, which the file system may give
/// the next file), so the path naming this very identity still means this version.
package final class HeldFileVersion: Sendable {
    private let descriptor: Int32
    package let identity: FileIdentity

    /// The version `path` names now, when it is still the version `read` was read or written as;
    /// `nil` otherwise, or when it cannot be opened.
    package init?(path: String, matching read: FileIdentity) {
        let descriptor = PosixFile.retrying { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, FileIdentity(info).isSameVersion(as: read) else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        // Its status-change time too, which a rename sets: from now on nothing of it may change.
        identity = FileIdentity(info)
    }

    deinit {
        close(descriptor)
    }

    /// Whether `path` still names this version, unchanged (its times and size included).
    package func isCurrent(at path: String) -> Bool {
        (try? PosixFile.identity(at: path)) == identity
    }
}
