/// A JSON document as the schema's quick reader sees it: strict RFC 8259 in UTF-8, numbers kept as
/// their text, and parsed only when it is plainly well-formed.
///
/// It is not the authority on what a schema is: ``DomainSchema/decode(from:)`` asks `JSONDecoder`
/// whenever this reader declines, so it may decline anything unusual (a byte-order mark, UTF-16,
/// a duplicate member, a trailing comma, nesting deeper than ``maximumDepth``, an unpaired
/// surrogate), and must never accept a document that `JSONDecoder` refuses.
enum SchemaJSON {
    /// An object's members in document order; no two have equal names.
    case object([Member])
    case array([SchemaJSON])
    case string(String)
    /// A number's literal text, as JSON's grammar allows it.
    case number(String)
    case boolean(Bool)
    case null

    /// A member of an object.
    struct Member {
        var name: String
        var value: SchemaJSON
    }

    /// The deepest nesting read; deeper documents are left to `JSONDecoder` (which allows 512).
    static let maximumDepth = 128

    /// The document in `bytes`, or `nil` when it is not plainly well-formed.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> SchemaJSON? {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? value : nil
    }

    /// The member named `name` of an object.
    subscript(member name: String) -> SchemaJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name == name }?.value
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        private var current: UInt8? {
            index < bytes.count ? bytes[index] : nil
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> SchemaJSON? {
            guard depth < SchemaJSON.maximumDepth, let byte = current else { return nil }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(SchemaJSON.string)
            case UInt8(ascii: "t"): return literal("true") ? .boolean(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .boolean(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number()
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                return false
            }
            index += count
            return true
        }

        private mutating func object(depth: Int) -> SchemaJSON? {
            index += 1
            var members: [Member] = []
            members.reserveCapacity(8)
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            // Past a few members, names are checked for repeats through a set.
            var names: Set<String> = []
            while true {
                guard current == UInt8(ascii: "\""), let name = string() else { return nil }
                if members.count < 16 {
                    if members.contains(where: { $0.name == name }) { return nil }
                } else {
                    if names.isEmpty { names = Set(members.map(\.name)) }
                    guard names.insert(name).inserted else { return nil }
                }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { return nil }
                index += 1
                skipWhitespace()
                guard let value = value(depth: depth + 1) else { return nil }
                members.append(Member(name: name, value: value))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipWhitespace()
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(members)
                default: return nil
                }
            }
        }

        private mutating func array(depth: Int) -> SchemaJSON? {
            index += 1
            var elements: [SchemaJSON] = []
            elements.reserveCapacity(4)
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipWhitespace()
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(elements)
                default: return nil
                }
            }
        }

        /// A string from its opening quote; `nil` for a control character, a bad escape, an
        /// unpaired surrogate or bytes that are not UTF-8.
        mutating func string() -> String? {
            index += 1
            let start = index
            // Most strings have no escape: their bytes are the string's, and most are ASCII.
            var isASCII = true
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let utf8 = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    return isASCII ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { isASCII = false }
                index += 1
            }
            var utf8 = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = escapedScalar() else { return nil }
                        utf8.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                default:
                    if byte < 0x20 { return nil }
                    utf8.append(byte)
                }
            }
            return nil
        }

        /// The scalar of `\uXXXX` (the `\u` read), with its low surrogate's `\uXXXX` when it is
        /// a high one.
        private mutating func escapedScalar() -> Unicode.Scalar? {
            guard let unit = hexUnit() else { return nil }
            switch unit {
            case 0xD800...0xDBFF:
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { return nil }
                index += 2
                guard let low = hexUnit(), (0xDC00...0xDFFF).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
            case 0xDC00...0xDFFF: return nil
            default: return Unicode.Scalar(unit)
            }
        }

        private mutating func hexUnit() -> UInt16? {
            guard bytes.count - index >= 4 else { return nil }
            var unit: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                unit = unit << 4 | UInt16(digit)
                index += 1
            }
            return unit
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as text.
        private mutating func number() -> SchemaJSON? {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() else { return nil }
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() else { return nil }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() else { return nil }
            }
            return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        }

        /// One or more decimal digits.
        private mutating func digits() -> Bool {
            let start = index
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                index += 1
            }
            return index > start
        }
    }
}
