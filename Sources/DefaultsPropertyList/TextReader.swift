import Foundation

/// Reads old-style (OpenStep/NeXT) property-list text, as `defaults write`
/// and CoreFoundation accept it: `{ key = value; }`, `(a, b)`, `<0fa1 22>`,
/// quoted strings with backslash escapes, and bare words.
///
/// Old-style text has no numbers, booleans or dates: every scalar is a
/// string (or data), exactly as in CoreFoundation.
struct TextReader {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var pos = 0
    private var depth = 0
    private var scratch: [UInt8] = []

    private init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.end = count
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) -> PropertyListValue {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw PropertyListError(kind: .truncated, message: "the input is empty", offset: 0, line: 1)
        }
        var reader = TextReader(base: base, count: bytes.count)
        return try reader.parseDocument()
    }

    /// Whether the text starts (after a BOM, whitespace and comments) with XML rather than old-style syntax.
    static func startsWithXML(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        var reader = TextReader(base: base, count: bytes.count)
        reader.skipBOM()
        reader.skipSpaceAndComments()
        return reader.atXMLMarkup()
    }

    // MARK: - Document

    private mutating func skipBOM() {
        if end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { pos = 3 }
    }

    private mutating func parseDocument() throws(PropertyListError) -> PropertyListValue {
        skipBOM()
        skipSpaceAndComments()
        guard pos < end else { throw error(.truncated, "the input holds no value") }
        let first = try parseValue()
        skipSpaceAndComments()
        if pos < end, base[pos] == UInt8(ascii: "="), case .string(let key) = first {
            // A top level of `key = value;` pairs without braces (the .strings layout).
            return .dictionary(try parseEntries(firstKey: key, closing: nil, openedAt: 0))
        }
        guard pos == end else { throw error(.syntax, "unexpected \(describeHere()) after the value") }
        return first
    }

    /// Whether `pos` is at `<?xml`, `<!`, `<plist` or a plist element such as `<integer>`, as opposed to hex data.
    private func atXMLMarkup() -> Bool {
        guard pos + 1 < end, base[pos] == UInt8(ascii: "<") else { return false }
        let next = base[pos + 1]
        if next == UInt8(ascii: "?") || next == UInt8(ascii: "!") { return true }
        var stop = pos + 1
        while stop < end, base[stop] | 0x20 >= UInt8(ascii: "a"), base[stop] | 0x20 <= UInt8(ascii: "z") { stop += 1 }
        let word = String(decoding: UnsafeBufferPointer(start: base + pos + 1, count: stop - pos - 1), as: UTF8.self)
        return ["plist", "dict", "array", "key", "string", "integer", "real", "true", "false", "date", "data"].contains(
            word)
    }

    // MARK: - Values

    private mutating func parseValue() throws(PropertyListError) -> PropertyListValue {
        guard pos < end else { throw error(.truncated, "the input ends where a value is expected") }
        switch base[pos] {
        case UInt8(ascii: "{"):
            let start = pos
            pos += 1
            try enter(start)
            defer { depth -= 1 }
            return .dictionary(try parseEntries(firstKey: nil, closing: UInt8(ascii: "}"), openedAt: start))
        case UInt8(ascii: "("):
            return .array(try parseArray())
        case UInt8(ascii: "<"):
            return .data(try parseData())
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try parseQuoted())
        case let byte where TextReader.isUnquoted(byte):
            return .string(parseUnquoted())
        default:
            throw error(.syntax, "unexpected \(describeHere()) where a value is expected")
        }
    }

    private mutating func enter(_ offset: Int) throws(PropertyListError) {
        depth += 1
        if depth > PropertyList.maximumDepth {
            throw error(.tooDeep, "containers are nested deeper than \(PropertyList.maximumDepth) levels", at: offset)
        }
    }

    private mutating func parseArray() throws(PropertyListError) -> [PropertyListValue] {
        let start = pos
        pos += 1
        try enter(start)
        defer { depth -= 1 }
        var array: [PropertyListValue] = []
        while true {
            skipSpaceAndComments()
            guard pos < end else { throw error(.truncated, "the input ends inside an array", at: start) }
            if base[pos] == UInt8(ascii: ")") {
                pos += 1
                return array
            }
            array.append(try parseValue())
            skipSpaceAndComments()
            guard pos < end else { throw error(.truncated, "the input ends inside an array", at: start) }
            switch base[pos] {
            case UInt8(ascii: ","): pos += 1
            case UInt8(ascii: ")"): break
            default: throw error(.syntax, "expected ',' or ')' in an array, found \(describeHere())")
            }
        }
    }

    /// Parses `key = value;` pairs up to `closing` (or the end of input when `closing` is nil).
    private mutating func parseEntries(firstKey: String?, closing: UInt8?, openedAt start: Int)
        throws(PropertyListError)
        -> [String: PropertyListValue]
    {
        var dictionary: [String: PropertyListValue] = [:]
        var pendingKey = firstKey
        while true {
            let key: String
            if let pending = pendingKey {
                key = pending
                pendingKey = nil
            } else {
                skipSpaceAndComments()
                guard pos < end else {
                    if closing == nil { return dictionary }
                    throw error(.truncated, "the input ends inside a dictionary", at: start)
                }
                if let closing, base[pos] == closing {
                    pos += 1
                    return dictionary
                }
                guard let parsed = try parseKey() else {
                    throw error(.syntax, "dictionary keys must be strings, found \(describeHere())")
                }
                key = parsed
            }
            skipSpaceAndComments()
            guard pos < end else { throw error(.truncated, "the input ends after the key \"\(key)\"", at: start) }
            if base[pos] == UInt8(ascii: ";") {
                // `key;` is the strings-file shorthand for `key = key;`.
                pos += 1
                dictionary[key] = .string(key)
                continue
            }
            guard base[pos] == UInt8(ascii: "=") else {
                throw error(.syntax, "expected '=' after the key \"\(key)\", found \(describeHere())")
            }
            pos += 1
            skipSpaceAndComments()
            let value = try parseValue()
            dictionary[key] = value
            skipSpaceAndComments()
            if pos < end, base[pos] == UInt8(ascii: ";") {
                pos += 1
            } else if pos < end, let closing, base[pos] == closing {
                // A missing ';' before the closing brace is forgiven.
                continue
            } else if pos >= end {
                if closing == nil { return dictionary }
                throw error(.truncated, "the input ends inside a dictionary", at: start)
            } else {
                throw error(.syntax, "missing ';' after the value of \"\(key)\"")
            }
        }
    }

    private mutating func parseKey() throws(PropertyListError) -> String? {
        let byte = base[pos]
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { return try parseQuoted() }
        if TextReader.isUnquoted(byte) { return parseUnquoted() }
        return nil
    }

    /// `<0fa1 22>`: hex digit pairs, whitespace allowed between bytes.
    private mutating func parseData() throws(PropertyListError) -> Data {
        let start = pos
        pos += 1
        var bytes: [UInt8] = []
        var high: UInt8?
        while pos < end {
            let byte = base[pos]
            pos += 1
            if byte == UInt8(ascii: ">") {
                guard high == nil else { throw error(.syntax, "odd number of hex digits in data", at: start) }
                return Data(bytes)
            }
            if NumberText.isSpace(byte) {
                guard high == nil else { throw error(.syntax, "whitespace inside a hex byte", at: pos - 1) }
                continue
            }
            guard let nibble = TextReader.hexValue(byte) else {
                throw error(.syntax, "invalid character in hex data", at: pos - 1)
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        throw error(.truncated, "the input ends inside <hex data>", at: start)
    }

    private mutating func parseUnquoted() -> String {
        let start = pos
        while pos < end, TextReader.isUnquoted(base[pos]) { pos += 1 }
        return String(decoding: UnsafeBufferPointer(start: base + start, count: pos - start), as: UTF8.self)
    }

    private mutating func parseQuoted() throws(PropertyListError) -> String {
        let start = pos
        let quote = base[pos]
        pos += 1
        let contentStart = pos
        while pos < end, base[pos] != quote, base[pos] != UInt8(ascii: "\\") { pos += 1 }
        guard pos < end else { throw error(.truncated, "unterminated quoted string", at: start) }
        if base[pos] == quote {
            pos += 1
            return String(
                decoding: UnsafeBufferPointer(start: base + contentStart, count: pos - 1 - contentStart), as: UTF8.self)
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: base + contentStart, count: pos - contentStart))
        var pendingHigh: UInt16?
        while pos < end {
            let byte = base[pos]
            if byte == quote {
                pos += 1
                if pendingHigh != nil { appendScalar(0xFFFD) }
                return String(decoding: scratch, as: UTF8.self)
            }
            pos += 1
            guard byte == UInt8(ascii: "\\") else {
                if pendingHigh != nil {
                    appendScalar(0xFFFD)
                    pendingHigh = nil
                }
                scratch.append(byte)
                continue
            }
            guard pos < end else { break }
            let escaped = base[pos]
            pos += 1
            if escaped == UInt8(ascii: "U") || escaped == UInt8(ascii: "u") {
                var unit: UInt32 = 0
                var digits = 0
                while digits < 4, pos < end, let nibble = TextReader.hexValue(base[pos]) {
                    unit = unit << 4 | UInt32(nibble)
                    digits += 1
                    pos += 1
                }
                guard digits > 0 else { throw error(.syntax, "\\U without hex digits", at: pos - 2) }
                // Escapes are UTF-16 code units: pair surrogates, replace lone ones.
                if let high = pendingHigh {
                    pendingHigh = nil
                    if (0xDC00...0xDFFF).contains(unit) {
                        appendScalar(0x10000 + (UInt32(high) - 0xD800) << 10 + (unit - 0xDC00))
                        continue
                    }
                    appendScalar(0xFFFD)
                }
                if (0xD800...0xDBFF).contains(unit) {
                    pendingHigh = UInt16(unit)
                } else {
                    appendScalar(unit)
                }
                continue
            }
            if pendingHigh != nil {
                appendScalar(0xFFFD)
                pendingHigh = nil
            }
            switch escaped {
            case UInt8(ascii: "a"): scratch.append(0x07)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "v"): scratch.append(0x0B)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                // Up to three octal digits; values above 127 are taken as Latin-1.
                var value = UInt32(escaped - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, pos < end, base[pos] >= UInt8(ascii: "0"), base[pos] <= UInt8(ascii: "7") {
                    value = value << 3 | UInt32(base[pos] - UInt8(ascii: "0"))
                    digits += 1
                    pos += 1
                }
                appendScalar(value)
            default:
                // `\"`, `\\`, `\'` and any other escaped character stand for themselves.
                scratch.append(escaped)
            }
        }
        throw error(.truncated, "unterminated quoted string", at: start)
    }

    private mutating func appendScalar(_ value: UInt32) {
        let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
        scratch.append(contentsOf: String(Character(scalar)).utf8)
    }

    // MARK: - Characters

    /// The characters CoreFoundation allows in an unquoted string.
    @inline(__always)
    private static func isUnquoted(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte == UInt8(ascii: "/")
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Skips whitespace, `// line` and `/* block */` comments.
    private mutating func skipSpaceAndComments() {
        while pos < end {
            let byte = base[pos]
            if NumberText.isSpace(byte) || byte == 0x0B || byte == 0x0C {
                pos += 1
            } else if byte == UInt8(ascii: "/"), pos + 1 < end, base[pos + 1] == UInt8(ascii: "/") {
                while pos < end, base[pos] != UInt8(ascii: "\n") { pos += 1 }
            } else if byte == UInt8(ascii: "/"), pos + 1 < end, base[pos + 1] == UInt8(ascii: "*") {
                pos += 2
                while pos < end,
                    !(base[pos] == UInt8(ascii: "*") && pos + 1 < end && base[pos + 1] == UInt8(ascii: "/"))
                {
                    pos += 1
                }
                pos = min(pos + 2, end)
            } else {
                return
            }
        }
    }

    // MARK: - Errors

    private func describeHere() -> String {
        guard pos < end else { return "the end of the input" }
        let byte = base[pos]
        if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private func error(_ kind: PropertyListError.Kind, _ message: String, at offset: Int? = nil) -> PropertyListError {
        .text(kind, message, at: offset ?? pos, in: UnsafeBufferPointer(start: base, count: end))
    }
}
