import struct Foundation.URL

/// A problem a suite met with its storage, reported to the caller and through ``Defaults/logger``.
public struct SuiteError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The stored data could not be read or parsed. A file that did not parse was moved aside
        /// to ``SuiteError/backupURL``; the suite goes on without its values.
        case unreadable
        /// Values could not be written to storage; they stay in memory.
        case writeFailed
        /// The storage could not be locked against other processes.
        case lockFailed
        /// A value given to the suite is not a property-list object; it was not stored.
        case unsupportedValue
        /// The key's value is enforced by the administrator (a managed file); the write changed nothing.
        case managedKey
    }

    /// The suite's name.
    public var suite: String
    /// What went wrong.
    public var kind: Kind
    /// A message for people, naming the file and the cause.
    public var message: String
    /// The file the problem is about, for suites stored in a file.
    public var fileURL: URL?
    /// Where an unreadable file was moved to, so that nothing in it is lost.
    public var backupURL: URL?

    /// Creates a suite error.
    public init(suite: String, kind: Kind, message: String) {
        self.suite = suite
        self.kind = kind
        self.message = message
    }

    /// Creates a suite error about a file, and where its unreadable contents were kept.
    public init(suite: String, kind: Kind, fileURL: URL?, backupURL: URL? = nil, message: String) {
        self.init(suite: suite, kind: kind, message: message)
        self.fileURL = fileURL
        self.backupURL = backupURL
    }

    public var description: String { "Suite \"\(suite)\": \(message)" }
}

/// Several suites' errors from one ``Defaults/flushAll()``.
public struct SuiteErrors: Error, CustomStringConvertible {
    /// Each suite's error.
    public var errors: [any Error]

    public var description: String { errors.map { "\($0)" }.joined(separator: "\n") }
}
