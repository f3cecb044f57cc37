import DefaultsPropertyList
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A writer that rewrites a suite file in place, as Foundation's `UserDefaults` on Linux does:
/// truncate, then write, in the same inode, taking no lock.
enum InPlaceRewriteCommands {
    /// `in-place-rewrite <file> <count> <gap-ms>`: truncates the file, prints `empty`, waits
    /// `gap-ms`, writes `count` keys `foreign-<i>` = i into it, and prints `written`.
    static func rewrite(_ arguments: [String]) {
        guard arguments.count == 3, let count = Int(arguments[1]), let gap = UInt32(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: in-place-rewrite <file> <count> <gap-ms>\n".utf8))
            exit(64)
        }
        var values: [String: Any] = [:]
        for index in 0..<count {
            values["foreign-\(index)"] = index
        }
        guard let document = try? PropertyList.encodeXML(values) else { exit(1) }
        let fd = open(arguments[0], O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else {
            FileHandle.standardError.write(Data("open: \(String(cString: strerror(errno)))\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("empty\n".utf8))
        usleep(gap * 1_000)
        let written = document.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == document.count else { exit(1) }
        FileHandle.standardOutput.write(Data("written\n".utf8))
    }
}
