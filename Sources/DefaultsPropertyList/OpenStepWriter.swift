import Foundation

/// Prints values in the old-style (OpenStep) text format, laid out as macOS
/// `defaults read` prints them.
///
/// The layout reproduces `-[NSDictionary descriptionWithLocale:indent:]`:
/// a nested collection starts with its own indentation right after `= `,
/// which gives the familiar `key =     (` lines.
struct OpenStepWriter: ~Copyable {
    private var out = ByteWriter(capacity: 1024)
    /// Where the text goes as it is written, when it is not collected whole.
    private let sink: ((UnsafeRawBufferPointer) -> Void)?
    /// How much text is collected before it is handed to `sink`.
    private static let chunkSize = 1 << 16

    private init(sink: ((UnsafeRawBufferPointer) -> Void)? = nil) {
        self.sink = sink
    }

    static func describe(_ value: Any) -> String {
        var writer = OpenStepWriter()
        writer.writeTopLevel(value)
        return writer.out.finishString()
    }

    /// `string` as a string is written inside a collection: bare or quoted.
    static func quoted(_ string: String) -> String {
        var writer = OpenStepWriter()
        writer.appendQuotedIfNeeded(string)
        return writer.out.finishString()
    }

    /// Writes the description of `value` to `sink` in pieces, as it is made: the text of a large
    /// domain (a binary property list whose shared objects are written out at each reference
    /// can print a hundred times its size) is never held whole.
    static func write(_ value: Any, to sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        var writer = OpenStepWriter(sink: sink)
        writer.writeTopLevel(value)
        writer.out.drain(into: sink)
    }

    /// Hands what is written so far to the sink once it is a chunk.
    private mutating func flushIfFull() {
        if let sink, out.count >= Self.chunkSize {
            out.drain(into: sink)
        }
    }

    private mutating func writeTopLevel(_ value: Any) {
        switch PropertyListClassification.classify(value) {
        case .string(let string):
            // `defaults read domain key` prints a top-level scalar as its plain description.
            out.append(string)
        case .date(let date):
            appendDateText(date)
        case .int(let int):
            out.appendDecimal(int)
        case .double(let double):
            NumberText.appendDescription(double, to: &out)
        default:
            write(value, level: 0)
        }
    }

    private mutating func write(_ value: Any, level: Int) {
        // A tree of values is walked as it is: boxing a container's elements first would copy
        // each level (a million references to one shared object, a million boxes).
        if type(of: value) == PropertyListValue.self, let value = value as? PropertyListValue {
            switch value {
            case .array(let array):
                return writeArray(array, level: level)
            case .dictionary(let dictionary):
                return writeEntries(dictionary.sorted { $0.key < $1.key }, level: level)
            default:
                break
            }
        }
        switch PropertyListClassification.classify(value) {
        case .string(let string):
            appendQuotedIfNeeded(string)
        case .int(let int):
            if int < 0 { appendQuoted { $0.appendDecimal(int) } } else { out.appendDecimal(int) }
        case .uint(let uint):
            out.appendDecimal(uint)
        case .double(let double):
            var text = ByteWriter(capacity: 32)
            NumberText.appendDescription(double, to: &text)
            appendQuotedIfNeeded(text.finishString())
        case .bool(let bool):
            out.append(bool ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        case .date(let date):
            out.append(UInt8(ascii: "\""))
            appendDateText(date)
            out.append(UInt8(ascii: "\""))
        case .data(let data):
            appendData(data)
        case .array(let array):
            writeArray(array, level: level)
        case .dictionary(let dictionary):
            writeEntries(dictionary.sorted { $0.key < $1.key }, level: level)
        case .hashableDictionary(let dictionary):
            // Non-string keys cannot be written back anyway; describe them rather than fail.
            let entries = dictionary.map {
                (key: ($0.key.base as? String) ?? String(describing: $0.key.base), value: $0.value)
            }
            writeEntries(entries.sorted { $0.key < $1.key }, level: level)
        case .null:
            out.append("\"<null>\"")
        case .unsupported:
            appendQuotedIfNeeded(String(describing: value))
        }
    }

    private mutating func indent(_ level: Int) {
        out.append(repeating: UInt8(ascii: " "), count: 4 * level)
    }

    private mutating func writeArray<Element>(_ array: [Element], level: Int) {
        indent(level)
        guard level < PropertyList.maximumDepth else {
            out.append("( ... )")
            return
        }
        out.append("(\n")
        for (index, element) in array.enumerated() {
            indent(level + 1)
            write(element, level: level + 1)
            out.append(index + 1 < array.count ? ",\n" : "\n")
            flushIfFull()
        }
        indent(level)
        out.append(UInt8(ascii: ")"))
    }

    private mutating func writeEntries<Value>(_ entries: [(key: String, value: Value)], level: Int) {
        indent(level)
        guard level < PropertyList.maximumDepth else {
            out.append("{ ... }")
            return
        }
        out.append("{\n")
        for (key, value) in entries {
            indent(level + 1)
            appendQuotedIfNeeded(key)
            out.append(" = ")
            write(value, level: level + 1)
            out.append(";\n")
            flushIfFull()
        }
        indent(level)
        out.append(UInt8(ascii: "}"))
    }

    /// `{length = 3, bytes = 0x010203}`; longer data shows its first 16 and last 8 bytes, as macOS 10.15 and later print it.
    private mutating func appendData(_ data: Data) {
        out.append("{length = ")
        out.appendDecimal(data.count)
        out.append(", bytes = 0x")
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            if bytes.count <= 24 {
                for byte in bytes { out.appendHex(byte) }
                out.append(UInt8(ascii: "}"))
                return
            }
            for group in 0..<4 {
                if group > 0 { out.append(UInt8(ascii: " ")) }
                for byte in bytes[(group * 4)..<(group * 4 + 4)] { out.appendHex(byte) }
            }
            out.append(" ... ")
            let tail = bytes.count - 8
            for group in 0..<2 {
                for byte in bytes[(tail + group * 4)..<(tail + group * 4 + 4)] { out.appendHex(byte) }
                out.append(UInt8(ascii: " "))
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `2024-01-01 12:00:00 +0000`, the description of an `NSDate`.
    private mutating func appendDateText(_ date: Date) {
        CivilTime(referenceInterval: date.timeIntervalSinceReferenceDate).append(to: &out, between: " ", zone: " +0000")
    }

    private mutating func appendQuoted(_ body: (inout ByteWriter) -> Void) {
        out.append(UInt8(ascii: "\""))
        body(&out)
        out.append(UInt8(ascii: "\""))
    }

    /// Strings print bare only when they are ASCII letters and digits, as in `defaults read`;
    /// anything else is quoted, with non-ASCII characters as `\UXXXX` (UTF-16, lowercase hex).
    private mutating func appendQuotedIfNeeded(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            let bare =
                !bytes.isEmpty
                && bytes.allSatisfy { byte in
                    (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                        || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                }
            if bare {
                out.append(bytes)
                return
            }
            out.append(UInt8(ascii: "\""))
            var asciiOnly = true
            for byte in bytes where byte >= 0x80 {
                asciiOnly = false
                break
            }
            if asciiOnly {
                for byte in bytes { appendEscapedASCII(byte) }
            } else {
                for unit in String(decoding: bytes, as: UTF8.self).utf16 {
                    if unit < 0x80 {
                        appendEscapedASCII(UInt8(unit))
                    } else {
                        appendUnicodeEscape(unit)
                    }
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    private mutating func appendEscapedASCII(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): out.append("\\\"")
        case UInt8(ascii: "\\"): out.append("\\\\")
        case UInt8(ascii: "\n"): out.append("\\n")
        case UInt8(ascii: "\t"): out.append("\\t")
        case UInt8(ascii: "\r"): out.append("\\r")
        case 0..<0x20, 0x7F: appendUnicodeEscape(UInt16(byte))
        default: out.append(byte)
        }
    }

    private mutating func appendUnicodeEscape(_ unit: UInt16) {
        out.append("\\U")
        out.appendHex(UInt8(unit >> 8))
        out.appendHex(UInt8(unit & 0xFF))
    }
}
