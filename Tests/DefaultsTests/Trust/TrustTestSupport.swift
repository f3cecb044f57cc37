import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The trust tests: each reproduces one way the file-backed suite lost a value, hung, wrote where
/// it should not, or stopped the host program.
@Suite(.mayBlock)
enum Trust {}

/// What is at `path` itself (not following a link): `S_IFREG`, `S_IFLNK`…; `nil` if nothing.
func fileType(at path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT
}
