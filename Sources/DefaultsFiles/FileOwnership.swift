import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whose files the library trusts: the one rule every read and write of a file goes through.
///
/// Whoever owns a file, or a directory above it, can change what it says (or swap it for another
/// between two calls). The user's own files must therefore be the user's or root's, in directories
/// that are the user's or root's; an administrator's files must be root's (or their directory's
/// owner's) and writable by nobody else, as sudo judges its files.
package enum FileOwnership: Sendable {
    /// A file of the user's own: the user's or root's.
    case user
    /// An administrator's file: root's or `directoryOwner`'s, writable by neither group nor others.
    case administrator(directoryOwner: uid_t)

    /// Why what `info` describes may not be trusted under this rule; `nil` when it may.
    package func refusal(of info: stat) -> String? {
        switch self {
        case .user:
            guard info.st_uid == geteuid() || info.st_uid == 0 else {
                return "it belongs to another user (uid \(info.st_uid))"
            }
        case .administrator(let directoryOwner):
            guard info.st_uid == 0 || info.st_uid == directoryOwner else {
                return "it belongs to uid \(info.st_uid), neither root nor the owner of its directory"
            }
            guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
                return "it is writable by users other than its owner"
            }
        }
        return nil
    }

    /// Checks each directory from `path`'s parent up to `/` (following links, so that the
    /// directory actually used is judged) under this rule; for a path in the user's home
    /// directory, up to the home directory, as OpenSSH's `StrictModes` judges `~/.ssh`: the
    /// directories above it are the system's (and in a user namespace, `/` may show as owned by
    /// `nobody`). Up to `top` at most, when given: a base directory the environment names (one of
    /// `$XDG_DATA_DIRS`), above which the directories are the system's likewise.
    ///
    /// - Throws: ``FileRefusal`` naming the first directory that may not be trusted.
    package func checkDirectories(above path: String, through top: String? = nil) throws {
        let home = Self.homeDirectory
        var directory = (path as NSString).deletingLastPathComponent
        while !directory.isEmpty {
            // A directory not made yet passes: the directories above it decide.
            if let info = try PosixFile.status(directory), let reason = refusal(of: info) {
                throw FileRefusal(description: "the directory \(directory) cannot be trusted: \(reason)")
            }
            if directory == "/" || directory == home || directory == top { break }
            directory = (directory as NSString).deletingLastPathComponent
        }
    }

    /// The user's home directory (`$HOME`, else the password database's), without a trailing
    /// slash; `nil` when neither names an absolute path other than `/`.
    static let homeDirectory: String? = {
        let home =
            EnvironmentVariable.value("HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        let trimmed = (home as NSString).standardizingPath
        return trimmed.hasPrefix("/") && trimmed != "/" ? trimmed : nil
    }()
}
