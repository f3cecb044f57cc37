import Foundation

/// A fast, dependency-free reader and writer of property lists.
///
/// Values are ``PropertyListValue``s, or use Foundation's model, held as `Any`: `String`, `Int`,
/// `UInt64` (only for integers above `Int.max`), `Double`, `Bool`, `Date`, `Data`, `[Any]` and
/// `[String: Any]`. Readers produce exactly these types; writers also accept a
/// ``PropertyListValue``, what Foundation hands out (`NSNumber`, `NSString`, `NSArray`,
/// `NSDictionary`, `[AnyHashable: Any]`, `Optional` wrappers) and the other fixed-width integers
/// and `Float`.
///
/// ```swift
/// let data = try PropertyList.encodeXML(["volume": 0.5, "names": ["a", "b"]])
/// let value = try PropertyList.decode(data) as? [String: Any]
/// ```
public enum PropertyList {
    /// How deeply containers may nest. Readers reject deeper input and writers
    /// deeper values, so that hostile input cannot exhaust the stack.
    public static let maximumDepth = 512

    /// The time of a date as an XML property list keeps it: whole seconds since the reference
    /// date, rounded down (`NaN` as the reference date).
    package static func xmlStoredSeconds(of date: Date) -> Double {
        CivilTime.storedSeconds(date.timeIntervalSinceReferenceDate)
    }

    /// The serialization formats this module reads.
    public enum Format: Sendable, Hashable {
        /// Apple's XML property list (`<?xml ...?><plist>...`), or a bare element such as `<integer>5</integer>`.
        case xml
        /// Apple's binary property list, `bplist00`.
        case binary
        /// Old-style OpenStep/NeXT text: `{ key = value; }`, `(a, b)`.
        case openStep
    }

    /// Tells which format `data` is in from its first bytes.
    ///
    /// Anything that is neither binary nor XML is taken to be old-style text,
    /// which may still fail to parse.
    public static func format(of data: some ContiguousBytes) -> Format {
        data.withUnsafeBytes { raw in format(of: raw.bindMemory(to: UInt8.self)) }
    }

    /// Detects the format (binary `bplist00`, XML, or old-style text) and decodes.
    ///
    /// Text that is not valid UTF-8 (or UTF-16, after a byte order mark) is refused, as
    /// Foundation refuses it, rather than repaired to U+FFFD: a repaired value written back would
    /// lose the original bytes.
    ///
    /// - Throws: ``PropertyListError`` with the byte offset (and line, for text)
    ///   of the problem. Malformed or hostile input never crashes or hangs.
    public static func decode(_ data: some ContiguousBytes) throws(PropertyListError) -> Any {
        try decodeValue(data).object
    }

    /// Detects the format and decodes, as ``decode(_:)`` does, into a ``PropertyListValue``: the
    /// readers build it directly, so this is the cheaper of the two.
    ///
    /// - Throws: ``PropertyListError`` with the byte offset (and line, for text) of the problem.
    public static func decodeValue(_ data: some ContiguousBytes) throws(PropertyListError) -> PropertyListValue {
        try withBytes(data) { (bytes) throws(PropertyListError) -> PropertyListValue in
            if BinaryReader.isBinary(bytes) { return try BinaryReader.decode(bytes) }
            if let utf8 = try transcodedUTF16(bytes) {
                return try withBytes(utf8) { (bytes) throws(PropertyListError) -> PropertyListValue in
                    try decodeText(bytes)
                }
            }
            return try decodeText(bytes)
        }
    }

    /// Decodes an XML property list, with or without the `<plist>` wrapper.
    public static func decodeXML(_ data: some ContiguousBytes) throws(PropertyListError) -> Any {
        try withBytes(data) { (bytes) throws(PropertyListError) -> Any in
            try validateUTF8(bytes)
            return try XMLReader.decode(bytes).object
        }
    }

    /// Decodes a binary (`bplist00`) property list.
    ///
    /// Every offset, count and reference is bounds-checked; cycles are rejected, and so are
    /// reference graphs whose decoded size (values, and the bytes of strings and data counted at
    /// every reference) is far beyond the file's, so that a small file cannot expand to gigabytes.
    public static func decodeBinary(_ data: some ContiguousBytes) throws(PropertyListError) -> Any {
        try withBytes(data) { (bytes) throws(PropertyListError) -> Any in try BinaryReader.decode(bytes).object }
    }

    /// Encodes `value` as an XML property list, in exactly the layout Foundation
    /// writes (XML declaration, DOCTYPE, `<plist version="1.0">`, tab
    /// indentation, base64 data in CoreFoundation's line lengths), with
    /// dictionary keys sorted so that the output is deterministic.
    ///
    /// Reals are written in their shortest round-trip form (`0.1`, `1`,
    /// `-2.5`) and as `0.0`, `nan`, `+infinity`, `-infinity` like Foundation; dates as
    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, rounded down to the second as
    /// Foundation does.
    ///
    /// - Throws: ``PropertyListError`` of kind `unsupportedValue`, naming the
    ///   type and the key path, for a value with no property-list form (a
    ///   `nil`, a `URL`, a non-string dictionary key, ...), or `tooDeep`.
    public static func encodeXML(_ value: Any) throws(PropertyListError) -> Data {
        try XMLWriter.encode(value)
    }

    /// Old-style (OpenStep/NeXT) text, the way macOS `defaults read` prints:
    /// `{\n    key = value;\n}` with 4-space indentation, `(\n    1,\n    2\n)`,
    /// strings quoted unless they are ASCII letters and digits (non-ASCII as
    /// `\UXXXX`), data as `{length = 3, bytes = 0x010203}`, dates as
    /// `"2024-01-01 12:00:00 +0000"`, booleans as `1`/`0`.
    ///
    /// As in `defaults read domain key`, a top-level string, number or date
    /// prints as its plain description, without quotes. Values that have no
    /// property-list form print as their description rather than failing.
    public static func openStepDescription(_ value: Any) -> String {
        OpenStepWriter.describe(value)
    }

    /// `string` as old-style text writes a string: bare when it is ASCII letters and digits,
    /// else quoted and escaped (how `defaults` prints a key's name).
    package static func openStepQuoted(_ string: String) -> String {
        OpenStepWriter.quoted(string)
    }

    /// Writes ``openStepDescription(_:)`` of `value` to `sink` in pieces (of about 64 KB) as it
    /// is made, for text too large to hold whole.
    public static func writeOpenStepDescription(
        _ value: Any, to sink: @escaping (UnsafeRawBufferPointer) -> Void
    ) {
        OpenStepWriter.write(value, to: sink)
    }

    /// Parses old-style text as `defaults write` accepts it: `(1, 2)`,
    /// `{ a = 1; b = (x, y); }`, quoted strings with `\"` `\\` `\n` `\U00e9`
    /// escapes, `<0fa1 22>` hex data, bare words, `//` and `/* */` comments.
    /// Old-style scalars are strings (`(1, 2)` is `["1", "2"]`), as in
    /// CoreFoundation.
    ///
    /// An XML fragment such as `<integer>5</integer>`, `<array>...</array>` or
    /// `<dict>...</dict>` (or a whole XML document) is decoded as XML.
    public static func parseText(_ text: String) throws(PropertyListError) -> Any {
        try parseTextValue(text).object
    }

    /// Parses old-style text (or an XML fragment) as ``parseText(_:)`` does, into a
    /// ``PropertyListValue``.
    public static func parseTextValue(_ text: String) throws(PropertyListError) -> PropertyListValue {
        var text = text
        let result = text.withUTF8 { bytes in
            Result { () throws(PropertyListError) -> PropertyListValue in try decodeText(bytes) }
        }
        return try result.get()
    }

    /// Converts a Foundation-style value into exactly this module's value
    /// model: `NSNumber` into `Bool`, `Int`, `UInt64` or `Double`, bridged
    /// collections into `[Any]` and `[String: Any]`, `Optional` wrappers
    /// removed, other integer widths into `Int`, `Float` into `Double`.
    ///
    /// - Throws: ``PropertyListError`` of kind `unsupportedValue` for anything
    ///   that cannot be stored in a property list.
    public static func normalize(_ value: Any) throws(PropertyListError) -> Any {
        try PropertyListValue(value).object
    }

    /// Whether two values are equal as property-list values (`NaN` equals
    /// `NaN`; `1`, `1.0` and `true` are all different).
    ///
    /// Values that are not property-list values compare unequal.
    public static func isEqual(_ lhs: Any, _ rhs: Any) -> Bool {
        PropertyListClassification.isEqual(lhs, rhs, depth: 0)
    }

    // MARK: - Helpers

    private static func format(of bytes: UnsafeBufferPointer<UInt8>) -> Format {
        if BinaryReader.isBinary(bytes) { return .binary }
        if let utf8 = try? transcodedUTF16(bytes) {
            return utf8.withUnsafeBufferPointer { TextReader.startsWithXML($0) } ? .xml : .openStep
        }
        return TextReader.startsWithXML(bytes) ? .xml : .openStep
    }

    private static func decodeText(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) -> PropertyListValue {
        try validateUTF8(bytes)
        return TextReader.startsWithXML(bytes) ? try XMLReader.decode(bytes) : try TextReader.decode(bytes)
    }

    /// Refuses text that is not valid UTF-8, as Foundation does: repairing it to U+FFFD would lose
    /// the original bytes at the next write. ASCII, the common case, is checked without decoding.
    private static func validateUTF8(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) {
        guard let first = ASCIIScan.firstNonASCII(in: bytes) else { return }
        let rest = UnsafeBufferPointer(rebasing: bytes[first...])
        guard String(validating: rest, as: UTF8.self) == nil else { return }
        throw PropertyListError.text(.syntax, "the text is not valid UTF-8", at: first, in: bytes)
    }

    /// Old-style `.strings` files are often UTF-16 with a byte order mark; the
    /// readers work on UTF-8, so such input is transcoded first.
    private static func transcodedUTF16(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) -> [UInt8]? {
        guard bytes.count >= 2 else { return nil }
        let bigEndian: Bool
        switch (bytes[0], bytes[1]) {
        case (0xFE, 0xFF): bigEndian = true
        case (0xFF, 0xFE): bigEndian = false
        default: return nil
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 2
        while index + 1 < bytes.count {
            let first = UInt16(bytes[index])
            let second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else {
            throw PropertyListError(kind: .syntax, message: "the text is not valid UTF-16", offset: 0)
        }
        return Array(text.utf8)
    }

    /// Runs `body` on the bytes of `data` while keeping the typed error.
    private static func withBytes<R>(
        _ data: some ContiguousBytes,
        _ body: (UnsafeBufferPointer<UInt8>) throws(PropertyListError) -> R
    ) throws(PropertyListError) -> R {
        let result = data.withUnsafeBytes { raw in
            Result { () throws(PropertyListError) -> R in try body(raw.bindMemory(to: UInt8.self)) }
        }
        return try result.get()
    }
}
