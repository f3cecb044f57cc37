/// An error thrown while reading or writing a property list.
///
/// Reading errors carry the byte offset (and, for the text formats, the
/// 1-based line) where the problem was found; writing errors carry the key
/// path of the offending value.
public struct PropertyListError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The class of problem, for code that needs to react to it.
    ///
    /// A struct rather than an enum so that new kinds can be added without
    /// breaking `switch` statements in client code.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// A short name of the kind, such as `"syntax"`.
        public let name: String

        /// The input ends before the property list is complete.
        public static let truncated = Kind(name: "truncated")
        /// Text that is not valid for the format (bad tag, unexpected character, bad escape).
        public static let syntax = Kind(name: "syntax")
        /// A binary property list whose structure is inconsistent (bad offset, count or reference, cycle).
        public static let corrupt = Kind(name: "corrupt")
        /// A number or date that does not fit the value model (integer overflow, bad date).
        public static let outOfRange = Kind(name: "out of range")
        /// Containers nested deeper than ``PropertyList/maximumDepth``.
        public static let tooDeep = Kind(name: "too deep")
        /// A value that has no property-list representation (a type, a `nil`, a non-string key).
        public static let unsupportedValue = Kind(name: "unsupported value")
        /// A document larger than the writer was allowed to make; ``PropertyListError/size`` says
        /// how large it would have been.
        public static let tooLarge = Kind(name: "too large")

        /// The kind's name.
        public var description: String { name }
    }

    /// The class of problem.
    public var kind: Kind
    /// The byte offset in the input where reading failed, if the error comes from a reader.
    public var offset: Int?
    /// The 1-based line in the input where reading failed, for XML and old-style text.
    public var line: Int?
    /// Where in the value the writer failed, such as `["window"]["frames"][2]`; `nil` for reading errors.
    public var keyPath: String?
    /// A human-readable explanation of the problem.
    public var message: String
    /// For ``Kind/tooLarge``: the bytes the document would have taken.
    public var size: Int?

    /// Creates an error; the readers and writers of this module are its usual source.
    public init(kind: Kind, message: String, offset: Int? = nil, line: Int? = nil, keyPath: String? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.line = line
        self.keyPath = keyPath
    }

    /// The message with its location, for example `line 3 (byte 57): <key> "a" has no value`.
    public var description: String {
        var location: [String] = []
        if let line { location.append("line \(line)") }
        if let offset { location.append(line == nil ? "byte \(offset)" : "(byte \(offset))") }
        if let keyPath { location.append("at \(keyPath.isEmpty ? "the top level" : keyPath)") }
        return location.isEmpty ? message : location.joined(separator: " ") + ": " + message
    }
}

extension PropertyListError {
    /// An error at `offset` in a text input, with the line computed from the bytes before it.
    static func text(_ kind: Kind, _ message: String, at offset: Int, in bytes: UnsafeBufferPointer<UInt8>)
        -> PropertyListError
    {
        let end = min(max(offset, 0), bytes.count)
        var line = 1
        // Errors are rare, so counting lines only when one is thrown keeps the happy path free of bookkeeping.
        for index in 0..<end where bytes[index] == UInt8(ascii: "\n") { line += 1 }
        return PropertyListError(kind: kind, message: message, offset: offset, line: line)
    }

    /// The same error with `component` prepended to its key path; writers call it while unwinding.
    func prependingKeyPath(_ component: String) -> PropertyListError {
        var copy = self
        copy.keyPath = component + (keyPath ?? "")
        return copy
    }
}
