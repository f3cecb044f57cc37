import Foundation

/// Writes XML property lists byte for byte in CoreFoundation's layout, so
/// that files look as if Foundation had written them.
struct XMLWriter: ~Copyable {
    var out: ByteWriter

    init(capacity: Int = 16 * 1024, limit: Int = .max) {
        out = ByteWriter(capacity: capacity, limit: limit)
    }

    static let header: StaticString = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """
    static let footer: StaticString = "</plist>\n"

    static func encode(_ value: Any) throws(PropertyListError) -> Data {
        var writer = XMLWriter()
        writer.out.append(header)
        try writer.write(value, indent: 0)
        writer.out.append(footer)
        return writer.out.finishData()
    }

    /// Writes one entry of a dictionary at `indent`: its key line, then its value.
    mutating func writeEntry(key: String, value: Any, indent: Int) throws(PropertyListError) {
        tabs(indent)
        out.append("<key>")
        appendEscaped(key)
        out.append("</key>\n")
        do {
            try write(value, indent: indent)
        } catch {
            throw error.prependingKeyPath(PropertyListClassification.keyComponent(key))
        }
    }

    private mutating func write(_ value: Any, indent: Int) throws(PropertyListError) {
        // A tree of values is walked as it is, not boxed a level at a time.
        if type(of: value) == PropertyListValue.self, let value = value as? PropertyListValue {
            switch value {
            case .array(let array):
                return try writeArray(array, indent: indent)
            case .dictionary(let dictionary):
                return try writeDictionary(dictionary, indent: indent)
            default:
                break
            }
        }
        switch PropertyListClassification.classify(value) {
        case .string(let string):
            tabs(indent)
            out.append("<string>")
            appendEscaped(string)
            out.append("</string>\n")
        case .int(let int):
            tabs(indent)
            out.append("<integer>")
            out.appendDecimal(int)
            out.append("</integer>\n")
        case .uint(let uint):
            tabs(indent)
            out.append("<integer>")
            out.appendDecimal(uint)
            out.append("</integer>\n")
        case .double(let double):
            tabs(indent)
            out.append("<real>")
            NumberText.appendReal(double, to: &out)
            out.append("</real>\n")
        case .bool(let bool):
            tabs(indent)
            out.append(bool ? "<true/>\n" : "<false/>\n")
        case .date(let date):
            tabs(indent)
            out.append("<date>")
            NumberText.appendISODate(date.timeIntervalSinceReferenceDate, to: &out)
            out.append("</date>\n")
        case .data(let data):
            tabs(indent)
            out.append("<data>\n")
            Base64.encodeLines(data, indent: indent, into: &out)
            tabs(indent)
            out.append("</data>\n")
        case .array(let array):
            try writeArray(array, indent: indent)
        case .dictionary(let dictionary):
            try writeDictionary(dictionary, indent: indent)
        case .hashableDictionary(let dictionary):
            try checkDepth(indent)
            if dictionary.isEmpty {
                tabs(indent)
                out.append("<dict/>\n")
                return
            }
            try writeEntries(
                try PropertyListClassification.stringKeyed(dictionary).sorted { $0.key < $1.key }, indent: indent)
        case .null:
            throw PropertyListClassification.unrepresentable(nil)
        case .unsupported(let type):
            throw PropertyListClassification.unrepresentable(type)
        }
    }

    private mutating func writeArray<Element>(_ array: [Element], indent: Int) throws(PropertyListError) {
        try checkDepth(indent)
        tabs(indent)
        if array.isEmpty {
            out.append("<array/>\n")
            return
        }
        out.append("<array>\n")
        for (index, element) in array.enumerated() {
            do {
                try write(element, indent: indent + 1)
            } catch {
                throw error.prependingKeyPath("[\(index)]")
            }
        }
        tabs(indent)
        out.append("</array>\n")
    }

    private mutating func writeDictionary<Value>(_ dictionary: [String: Value], indent: Int) throws(PropertyListError) {
        try checkDepth(indent)
        if dictionary.isEmpty {
            tabs(indent)
            out.append("<dict/>\n")
            return
        }
        // Sorted keys make the output deterministic, as CoreFoundation's is.
        try writeEntries(dictionary.sorted { $0.key < $1.key }, indent: indent)
    }

    private mutating func writeEntries<Value>(
        _ entries: [(key: String, value: Value)], indent: Int
    ) throws(PropertyListError) {
        tabs(indent)
        out.append("<dict>\n")
        for (key, value) in entries {
            try writeEntry(key: key, value: value, indent: indent + 1)
        }
        tabs(indent)
        out.append("</dict>\n")
    }

    private func checkDepth(_ indent: Int) throws(PropertyListError) {
        // The same limit as the readers, so that whatever is written can be read back.
        if indent >= PropertyList.maximumDepth {
            throw PropertyListError(
                kind: .tooDeep, message: "containers are nested deeper than \(PropertyList.maximumDepth) levels",
                keyPath: "")
        }
    }

    @inline(__always)
    private mutating func tabs(_ count: Int) {
        out.append(repeating: UInt8(ascii: "\t"), count: count)
    }

    /// Appends `string` with `&`, `<` and `>` escaped, the only characters CoreFoundation escapes.
    private mutating func appendEscaped(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let escape: StaticString
                switch bytes[index] {
                case UInt8(ascii: "&"): escape = "&amp;"
                case UInt8(ascii: "<"): escape = "&lt;"
                case UInt8(ascii: ">"): escape = "&gt;"
                default: continue
                }
                out.append(UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                out.append(escape)
                runStart = index + 1
            }
            out.append(UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
    }
}
