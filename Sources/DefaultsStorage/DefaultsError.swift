import struct Foundation.URL

/// A problem the library met: stored data that could not be read, written or locked, a value that
/// could not be stored, a write to a key the administrator manages, or several of these at once.
///
/// Suites throw it from `flush()` and report it through their `problems` and `onProblem`
/// (``FileSuite/onProblem``, ``InMemorySuite/onProblem``, ``UserDefaultsSuite/onProblem``) and
/// ``Defaults/logger``;
/// ``Defaults/SnapshotStore/write(_:)``, ``Defaults/LaunchArguments/set(_:to:)`` and
/// ``Defaults/flushAll()`` throw it too. Match on ``kind``; show ``description`` to people.
///
/// ```swift
/// do {
///     try suite.flush()
/// } catch let error as DefaultsError where error.kind == .writeFailed {
///     print(error)  // Suite "com.example.app": could not write …; the values stay in memory …
/// }
/// ```
public struct DefaultsError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// Stored data could not be read or parsed. A file that did not parse was moved aside to
        /// ``DefaultsError/backupURL``; the suite goes on without its values.
        case unreadable
        /// Values could not be written to storage; they stay in memory and are written by the next
        /// flush or write that succeeds.
        case writeFailed
        /// The storage could not be locked against other processes: another process held the lock
        /// for longer than a write may wait (10 seconds), or the lock file is a link, not a regular
        /// file, or another user's. The values stay in memory for the next flush.
        case lockFailed
        /// A value has no property-list form (its bridge could not serialize it, or a suite was
        /// given an object that is not a property-list object), so it was not stored.
        case unsupportedValue
        /// A value would make the suite's file larger than a reader takes (64 MB), so it was not
        /// stored and its key keeps its stored value; every other value is written.
        case tooLarge
        /// The key's value is enforced by the administrator (a managed file); the write changed
        /// nothing.
        case managedKey
        /// A value from outside the program (an administrator's file, another machine) does not
        /// fit the type of the key that reads it: it was ignored, and a read goes on to the next
        /// layer (the user's value, the default) as if it were absent.
        case wrongType
        /// Several problems at once, each in ``DefaultsError/causes``: suites that could not be
        /// flushed, values of one transaction that could not be stored.
        case multiple
    }

    /// What went wrong.
    public var kind: Kind
    /// The name of the suite the problem is about, if it is about one.
    public var suite: String?
    /// The key the problem is about, if it is about one.
    public var key: String?
    /// The file the problem is about, for suites stored in a file.
    public var fileURL: URL?
    /// Where an unreadable file was moved to, so that nothing in it is lost.
    public var backupURL: URL?
    /// A message for people, naming the key or file and the cause.
    public var message: String
    /// The error that caused this one (a failed system call, a property-list encoding error), if
    /// there was one.
    public var underlyingError: (any Error)?
    /// The problems a ``Kind/multiple`` error is made of; empty for the other kinds.
    public var causes: [DefaultsError]

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - suite: The suite's name, if the problem is about one suite.
    ///   - kind: What went wrong.
    ///   - key: The key, if the problem is about one key.
    ///   - fileURL: The file, for suites stored in a file.
    ///   - backupURL: Where an unreadable file was moved to.
    ///   - message: A message for people, naming the key or file and the cause.
    ///   - underlyingError: The error that caused this one.
    public init(
        suite: String? = nil,
        kind: Kind,
        key: String? = nil,
        fileURL: URL? = nil,
        backupURL: URL? = nil,
        message: String,
        underlyingError: (any Error)? = nil
    ) {
        self.kind = kind
        self.suite = suite
        self.key = key
        self.fileURL = fileURL
        self.backupURL = backupURL
        self.message = message
        self.underlyingError = underlyingError
        causes = []
    }

    /// One error for several problems: the only one itself, or a ``Kind/multiple`` error that
    /// carries them all, with `message` saying what they stopped.
    package init(combining causes: [DefaultsError], message: String) {
        if causes.count == 1, let only = causes.first {
            self = only
            return
        }
        self.init(kind: .multiple, message: message)
        let suites = Set(causes.map(\.suite))
        if suites.count == 1, let suite = suites.first {
            self.suite = suite
        }
        self.causes = causes
    }

    /// A value that its bridge could not turn into a property-list object, so it was not stored.
    package static func unserializable(key: String, valueType: Any.Type, reason: String) -> DefaultsError {
        DefaultsError(
            kind: .unsupportedValue, key: key,
            message:
                "the value of type \(String(reflecting: valueType)) for key \"\(key)\" cannot be serialized: \(reason)"
        )
    }

    /// The message, after the suite's name when there is one; for a ``Kind/multiple`` error,
    /// followed by each cause on a line of its own.
    public var description: String {
        let head = suite.map { "Suite \"\($0)\": \(message)" } ?? message
        guard !causes.isEmpty else { return head }
        return ([head + ":"] + causes.map { "- \($0.description)" }).joined(separator: "\n")
    }
}
