#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What tells one version of a file from another without reading it. A writer that replaces the
/// file by renaming gives it a new inode; one that rewrites it in place changes its times or size.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    package var modificationSeconds: Int
    package var modificationNanoseconds: Int
    package var changeSeconds: Int
    package var changeNanoseconds: Int

    package init(_ info: stat) {
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

    /// Whether both name the same file (not necessarily the same version of it).
    package func isSameFile(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode
    }

    /// Whether both are the same version of the same file, whatever its status-change time (which
    /// a rename changes): a write in place changes its size or modification time.
    package func isSameVersion(as other: FileIdentity) -> Bool {
        isSameFile(as: other) && size == other.size && modificationSeconds == other.modificationSeconds
            && modificationNanoseconds == other.modificationNanoseconds
    }
}
