import Foundation

/// Reads XML property lists (Apple's plist DTD) straight from UTF-8 bytes.
///
/// A hand-written recursive-descent scanner: the plist vocabulary is tiny,
/// and working on raw bytes with one `String` built per string value is what
/// makes this several times faster than a general XML parser.
struct XMLReader {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var pos: Int
    private var depth = 0
    /// Reused for strings that need entity decoding, so that only those pay for a buffer.
    private var scratch: [UInt8] = []
    /// The elements of the arrays being read, innermost last (see ``parseArray(_:)``).
    private var elements: [PropertyListValue] = []

    private enum Tag {
        case plist, dict, array, key, string, integer, real, `true`, `false`, date, data, other
    }

    private struct OpenTag {
        var tag: Tag
        var isEmpty: Bool
        var offset: Int
        var nameStart: Int
        var nameLength: Int
    }

    private init(base: UnsafePointer<UInt8>, count: Int, start: Int) {
        self.base = base
        self.end = count
        self.pos = start
    }

    /// Decodes a whole XML document, or a bare value element such as `<integer>5</integer>`.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) -> PropertyListValue {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw PropertyListError(kind: .truncated, message: "the input is empty", offset: 0, line: 1)
        }
        var reader = XMLReader(base: base, count: bytes.count, start: 0)
        return try reader.parseDocument()
    }

    // MARK: - Document

    private mutating func parseDocument() throws(PropertyListError) -> PropertyListValue {
        // UTF-8 byte order mark.
        if end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { pos = 3 }
        try skipMisc(allowDoctype: true)
        guard pos < end else { throw error(.truncated, "the document has no root element") }
        guard base[pos] == UInt8(ascii: "<") else { throw error(.syntax, "expected '<' at the start of the document") }
        if pos + 1 < end, base[pos + 1] == UInt8(ascii: "/") { throw error(.syntax, "unexpected closing tag") }
        let root = try readOpenTag()
        let value: PropertyListValue
        if root.tag == .plist {
            guard !root.isEmpty else { throw error(.syntax, "<plist> holds no value", at: root.offset) }
            try skipMisc()
            guard pos < end else { throw error(.truncated, "the document ends inside <plist>") }
            if isClosingTag() { throw error(.syntax, "<plist> holds no value") }
            guard base[pos] == UInt8(ascii: "<") else { throw unexpectedText() }
            value = try parseValue(try readOpenTag())
            try skipMisc()
            guard pos < end else { throw error(.truncated, "the document ends before </plist>") }
            if !isClosingTag() { throw error(.syntax, "<plist> holds more than one value") }
            try expectClosingTag("plist")
        } else {
            value = try parseValue(root)
        }
        try skipMisc()
        guard pos == end else { throw error(.syntax, "unexpected content after the end of the property list") }
        return value
    }

    // MARK: - Values

    private mutating func parseValue(_ open: OpenTag) throws(PropertyListError) -> PropertyListValue {
        switch open.tag {
        case .string:
            return .string(open.isEmpty ? "" : try readString(closing: "string"))
        case .integer:
            let text = try requiredContent(open, "integer")
            switch NumberText.parseInteger(text) {
            case .value(let value): return value
            case .invalid: throw error(.syntax, "invalid <integer> \(quoted(text))", at: open.offset)
            case .overflow:
                throw error(.outOfRange, "<integer> \(quoted(text)) does not fit in 64 bits", at: open.offset)
            }
        case .real:
            let text = try requiredContent(open, "real")
            guard let value = NumberText.parseReal(text) else {
                throw error(.syntax, "invalid <real> \(quoted(text))", at: open.offset)
            }
            return .real(value)
        case .true:
            if !open.isEmpty { try expectEmptyContent("true") }
            return .boolean(true)
        case .false:
            if !open.isEmpty { try expectEmptyContent("false") }
            return .boolean(false)
        case .date:
            let text = try requiredContent(open, "date")
            guard let interval = NumberText.parseISODate(text) else {
                throw error(.syntax, "invalid <date> \(quoted(text)); expected yyyy-MM-ddTHH:mm:ssZ", at: open.offset)
            }
            return .date(Date(timeIntervalSinceReferenceDate: interval))
        case .data:
            if open.isEmpty { return .data(Data()) }
            let text = try readContent(closing: "data")
            guard let data = Base64.decode(text) else {
                throw error(.syntax, "invalid base64 in <data>", at: open.offset)
            }
            return .data(data)
        case .array:
            return .array(open.isEmpty ? [] : try parseArray(open))
        case .dict:
            return .dictionary(open.isEmpty ? [:] : try parseDictionary(open))
        case .key:
            throw error(.syntax, "<key> outside a <dict>", at: open.offset)
        case .plist:
            throw error(.syntax, "<plist> inside a value", at: open.offset)
        case .other:
            let name = String(
                decoding: UnsafeBufferPointer(start: base + open.nameStart, count: open.nameLength), as: UTF8.self)
            throw error(.syntax, "unknown tag <\(name)>", at: open.offset)
        }
    }

    private mutating func enterContainer(_ open: OpenTag) throws(PropertyListError) {
        depth += 1
        if depth > PropertyList.maximumDepth {
            throw error(
                .tooDeep, "containers are nested deeper than \(PropertyList.maximumDepth) levels", at: open.offset)
        }
    }

    private mutating func parseArray(_ open: OpenTag) throws(PropertyListError) -> [PropertyListValue] {
        try enterContainer(open)
        defer { depth -= 1 }
        // The elements go on `elements` (shared by the arrays being read, nested ones above their
        // parent's), then into an array of exactly their number: one allocation, no spare room.
        let first = elements.count
        defer { elements.removeSubrange(first...) }
        while true {
            try skipMisc()
            guard pos < end else { throw error(.truncated, "the document ends inside <array>", at: open.offset) }
            guard base[pos] == UInt8(ascii: "<") else { throw unexpectedText() }
            if isClosingTag() {
                try expectClosingTag("array")
                return Array(elements[first...])
            }
            let element = try parseValue(try readOpenTag())
            elements.append(element)
        }
    }

    private mutating func parseDictionary(_ open: OpenTag) throws(PropertyListError) -> [String: PropertyListValue] {
        try enterContainer(open)
        defer { depth -= 1 }
        var dictionary: [String: PropertyListValue] = [:]
        // The outermost dictionary (a suite's whole file) is made at its final size: growing it
        // from empty rehashes every key at each doubling and leaves the smaller tables freed but
        // resident. Nested ones are small, and counting them too would scan the bytes again per level.
        if depth == 1 {
            dictionary.reserveCapacity(countEntries(from: pos))
        }
        while true {
            try skipMisc()
            guard pos < end else { throw error(.truncated, "the document ends inside <dict>", at: open.offset) }
            guard base[pos] == UInt8(ascii: "<") else { throw unexpectedText() }
            if isClosingTag() {
                try expectClosingTag("dict")
                return dictionary
            }
            let keyTag = try readOpenTag()
            guard keyTag.tag == .key else {
                throw error(.syntax, "expected <key> in <dict>, found \(tagName(keyTag))", at: keyTag.offset)
            }
            let key = keyTag.isEmpty ? "" : try readString(closing: "key")
            try skipMisc()
            guard pos < end else { throw error(.truncated, "the document ends after <key>\(key)</key>") }
            guard base[pos] == UInt8(ascii: "<") else { throw unexpectedText() }
            if isClosingTag() {
                throw error(.syntax, "<key>\(key)</key> has no value", at: keyTag.offset)
            }
            // Duplicate keys: the last one wins, as in CoreFoundation.
            dictionary[key] = try parseValue(try readOpenTag())
        }
    }

    /// The number of `<key>`s directly in the dictionary whose content starts at `start`: a
    /// capacity, never trusted for anything else. Strings hold no raw `<` outside CDATA sections
    /// and comments, which are skipped; a malformed document only makes the count wrong, and the
    /// parse then fails as it would have. At most one entry per 13 bytes (`<key/><true/>`), so
    /// that no input reserves more than its size allows.
    private func countEntries(from start: Int) -> Int {
        var count = 0
        var nesting = 0
        var index = start
        while index < end {
            guard let found = memchr(base + index, Int32(UInt8(ascii: "<")), end - index) else { break }
            index = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base + 1
            guard index < end else { break }
            if base[index] == UInt8(ascii: "!") {
                // A comment or a CDATA section: skip to its end, whatever it holds.
                let closing: StaticString = index + 1 < end && base[index + 1] == UInt8(ascii: "[") ? "]]>" : "-->"
                guard let close = find(closing, from: index + 1) else { break }
                index = close + closing.utf8CodeUnitCount
            } else if hasName("key", at: index) {
                if nesting == 0 { count += 1 }
            } else if hasName("dict", at: index) {
                if !isSelfClosing(from: index) { nesting += 1 }
            } else if base[index] == UInt8(ascii: "/"), hasName("dict", at: index + 1) {
                if nesting == 0 { break }
                nesting -= 1
            }
        }
        return min(count, (end - start) / 13)
    }

    /// Whether the tag name at `index` is `name`.
    private func hasName(_ name: StaticString, at index: Int) -> Bool {
        let length = name.utf8CodeUnitCount
        guard index + length < end, equals(UnsafeBufferPointer(start: base + index, count: length), name) else {
            return false
        }
        return !isNameByte(base[index + length])
    }

    /// Whether the tag whose name starts at `index` ends with `/>`.
    private func isSelfClosing(from index: Int) -> Bool {
        var index = index
        while index < end, base[index] != UInt8(ascii: ">") { index += 1 }
        return index < end && base[index - 1] == UInt8(ascii: "/")
    }

    // MARK: - Tags

    @inline(__always)
    private func isNameByte(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
            || byte == UInt8(ascii: ".") || byte >= 0x80
    }

    /// Whether `pos` is at `</`.
    @inline(__always)
    private func isClosingTag() -> Bool {
        pos + 1 < end && base[pos] == UInt8(ascii: "<") && base[pos + 1] == UInt8(ascii: "/")
    }

    /// Reads `<name attr="...">` or `<name/>` at `pos`, which must be at `<`.
    private mutating func readOpenTag() throws(PropertyListError) -> OpenTag {
        let offset = pos
        pos += 1
        let nameStart = pos
        while pos < end, isNameByte(base[pos]) { pos += 1 }
        let nameLength = pos - nameStart
        guard nameLength > 0 else {
            if pos >= end { throw error(.truncated, "the document ends inside a tag", at: offset) }
            throw error(.syntax, "expected a tag name after '<'", at: offset)
        }
        let tag = identify(nameStart, nameLength)
        while true {
            while pos < end, NumberText.isSpace(base[pos]) { pos += 1 }
            guard pos < end else { throw error(.truncated, "the document ends inside a tag", at: offset) }
            switch base[pos] {
            case UInt8(ascii: ">"):
                pos += 1
                return OpenTag(tag: tag, isEmpty: false, offset: offset, nameStart: nameStart, nameLength: nameLength)
            case UInt8(ascii: "/"):
                guard pos + 1 < end else { throw error(.truncated, "the document ends inside a tag", at: offset) }
                guard base[pos + 1] == UInt8(ascii: ">") else {
                    throw error(.syntax, "expected '>' after '/' in a tag")
                }
                pos += 2
                return OpenTag(tag: tag, isEmpty: true, offset: offset, nameStart: nameStart, nameLength: nameLength)
            case let byte where isNameByte(byte):
                try skipAttribute(tagOffset: offset)
            default:
                throw error(.syntax, "unexpected character in a tag")
            }
        }
    }

    private mutating func skipAttribute(tagOffset: Int) throws(PropertyListError) {
        while pos < end, isNameByte(base[pos]) { pos += 1 }
        while pos < end, NumberText.isSpace(base[pos]) { pos += 1 }
        guard pos < end else { throw error(.truncated, "the document ends inside a tag", at: tagOffset) }
        guard base[pos] == UInt8(ascii: "=") else { throw error(.syntax, "expected '=' after an attribute name") }
        pos += 1
        while pos < end, NumberText.isSpace(base[pos]) { pos += 1 }
        guard pos < end else { throw error(.truncated, "the document ends inside a tag", at: tagOffset) }
        let quote = base[pos]
        guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw error(.syntax, "expected a quoted attribute value")
        }
        pos += 1
        while pos < end, base[pos] != quote { pos += 1 }
        guard pos < end else { throw error(.truncated, "the document ends inside an attribute value", at: tagOffset) }
        pos += 1
    }

    private func identify(_ start: Int, _ length: Int) -> Tag {
        let name = UnsafeBufferPointer(start: base + start, count: length)
        switch length {
        case 3:
            return equals(name, "key") ? .key : .other
        case 4:
            if equals(name, "dict") { return .dict }
            if equals(name, "real") { return .real }
            if equals(name, "true") { return .true }
            if equals(name, "date") { return .date }
            if equals(name, "data") { return .data }
            return .other
        case 5:
            if equals(name, "array") { return .array }
            if equals(name, "false") { return .false }
            if equals(name, "plist") { return .plist }
            return .other
        case 6:
            return equals(name, "string") ? .string : .other
        case 7:
            return equals(name, "integer") ? .integer : .other
        default:
            return .other
        }
    }

    @inline(__always)
    private func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
        return true
    }

    private func tagName(_ open: OpenTag) -> String {
        "<" + String(decoding: UnsafeBufferPointer(start: base + open.nameStart, count: open.nameLength), as: UTF8.self)
            + ">"
    }

    /// Consumes `</name>` (whitespace allowed before `>`).
    private mutating func expectClosingTag(_ name: StaticString) throws(PropertyListError) {
        let length = name.utf8CodeUnitCount
        let offset = pos
        guard pos + 2 + length <= end else {
            throw error(.truncated, "the document ends before </\(name)>", at: offset)
        }
        guard isClosingTag(), equals(UnsafeBufferPointer(start: base + pos + 2, count: length), name) else {
            throw error(.syntax, "expected </\(name)>", at: offset)
        }
        pos += 2 + length
        while pos < end, NumberText.isSpace(base[pos]) { pos += 1 }
        guard pos < end else { throw error(.truncated, "the document ends before </\(name)>", at: offset) }
        guard base[pos] == UInt8(ascii: ">") else { throw error(.syntax, "expected </\(name)>", at: offset) }
        pos += 1
    }

    /// For `<true></true>`: only whitespace may come before the closing tag.
    private mutating func expectEmptyContent(_ name: StaticString) throws(PropertyListError) {
        while pos < end, NumberText.isSpace(base[pos]) { pos += 1 }
        try expectClosingTag(name)
    }

    // MARK: - Content

    /// The raw text up to the closing tag; for numbers, dates and data, which have no entities.
    private mutating func readContent(closing name: StaticString) throws(PropertyListError) -> UnsafeBufferPointer<
        UInt8
    > {
        let start = pos
        while pos < end, base[pos] != UInt8(ascii: "<") { pos += 1 }
        guard pos < end else { throw error(.truncated, "the document ends inside <\(name)>", at: start) }
        let text = UnsafeBufferPointer(start: base + start, count: pos - start)
        try expectClosingTag(name)
        return text
    }

    private mutating func requiredContent(_ open: OpenTag, _ name: StaticString) throws(PropertyListError)
        -> UnsafeBufferPointer<
            UInt8
        >
    {
        guard !open.isEmpty else { throw error(.syntax, "empty <\(name)>", at: open.offset) }
        return try readContent(closing: name)
    }

    /// Reads the text of a `<string>` or `<key>`, decoding entities and CDATA.
    private mutating func readString(closing name: StaticString) throws(PropertyListError) -> String {
        let start = pos
        var index = pos
        while index < end {
            let byte = base[index]
            if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") { break }
            index += 1
        }
        guard index < end else { throw error(.truncated, "the document ends inside <\(name)>", at: start) }
        pos = index
        if isClosingTag() {
            // The common case: plain text, one String straight from the bytes.
            let string = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
            try expectClosingTag(name)
            return string
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: base + start, count: index - start))
        while true {
            guard pos < end else { throw error(.truncated, "the document ends inside <\(name)>", at: start) }
            let byte = base[pos]
            if byte == UInt8(ascii: "&") {
                try decodeEntity()
            } else if byte == UInt8(ascii: "<") {
                if isClosingTag() {
                    let string = String(decoding: scratch, as: UTF8.self)
                    try expectClosingTag(name)
                    return string
                } else if hasPrefix("<![CDATA[") {
                    let contentStart = pos + 9
                    guard let close = find("]]>", from: contentStart) else {
                        throw error(.truncated, "unterminated CDATA section")
                    }
                    scratch.append(
                        contentsOf: UnsafeBufferPointer(start: base + contentStart, count: close - contentStart))
                    pos = close + 3
                } else if hasPrefix("<!--") {
                    try skipComment()
                } else {
                    throw error(.syntax, "unexpected tag inside <\(name)>")
                }
            } else {
                let runStart = pos
                while pos < end, base[pos] != UInt8(ascii: "<"), base[pos] != UInt8(ascii: "&") { pos += 1 }
                scratch.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: pos - runStart))
            }
        }
    }

    /// Decodes `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#NNN;` `&#xHHHH;` at `pos` into `scratch`.
    private mutating func decodeEntity() throws(PropertyListError) {
        let start = pos
        var semicolon = pos + 1
        // Entity names here are at most "#x10FFFF" long; a longer run has no ';' to find.
        while semicolon < end, semicolon - start <= 10, base[semicolon] != UInt8(ascii: ";") { semicolon += 1 }
        guard semicolon < end, base[semicolon] == UInt8(ascii: ";") else {
            if semicolon >= end { throw error(.truncated, "the document ends inside an entity") }
            throw error(.syntax, "'&' that does not start an entity (write &amp;)")
        }
        let name = UnsafeBufferPointer(start: base + start + 1, count: semicolon - start - 1)
        if equals(name, "lt") {
            scratch.append(UInt8(ascii: "<"))
        } else if equals(name, "gt") {
            scratch.append(UInt8(ascii: ">"))
        } else if equals(name, "amp") {
            scratch.append(UInt8(ascii: "&"))
        } else if equals(name, "quot") {
            scratch.append(UInt8(ascii: "\""))
        } else if equals(name, "apos") {
            scratch.append(UInt8(ascii: "'"))
        } else if name.count >= 2, name[0] == UInt8(ascii: "#") {
            guard let scalar = numericEntity(UnsafeBufferPointer(rebasing: name[1...])) else {
                throw error(.syntax, "invalid character reference &\(String(decoding: name, as: UTF8.self));")
            }
            scratch.append(contentsOf: String(scalar).utf8)
        } else {
            throw error(.syntax, "unknown entity &\(String(decoding: name, as: UTF8.self));")
        }
        pos = semicolon + 1
    }

    private func numericEntity(_ text: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar? {
        var value: UInt32 = 0
        var digits = text[...]
        var radix: UInt32 = 10
        if let first = digits.first, first | 0x20 == UInt8(ascii: "x") {
            radix = 16
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        for byte in digits {
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value * radix + digit
            if value > 0x10FFFF { return nil }
        }
        return Unicode.Scalar(value)
    }

    // MARK: - Skipping

    /// Skips whitespace, comments and processing instructions (and, in the prolog, a DOCTYPE).
    private mutating func skipMisc(allowDoctype: Bool = false) throws(PropertyListError) {
        while pos < end {
            let byte = base[pos]
            if NumberText.isSpace(byte) {
                pos += 1
            } else if byte == UInt8(ascii: "<"), pos + 1 < end {
                let next = base[pos + 1]
                // A tag, the common case: nothing to skip.
                if next != UInt8(ascii: "?"), next != UInt8(ascii: "!") { return }
                if next == UInt8(ascii: "?") {
                    guard let close = find("?>", from: pos + 2) else { throw error(.truncated, "unterminated <?...?>") }
                    pos = close + 2
                } else if hasPrefix("<!--") {
                    try skipComment()
                } else if allowDoctype, hasPrefix("<!DOCTYPE") {
                    try skipDoctype()
                } else {
                    return
                }
            } else {
                return
            }
        }
    }

    private mutating func skipComment() throws(PropertyListError) {
        guard let close = find("-->", from: pos + 4) else { throw error(.truncated, "unterminated comment") }
        pos = close + 3
    }

    /// Skips `<!DOCTYPE ...>`, including quoted identifiers and an internal `[...]` subset.
    private mutating func skipDoctype() throws(PropertyListError) {
        let start = pos
        pos += 9
        var quote: UInt8 = 0
        var brackets = 0
        while pos < end {
            let byte = base[pos]
            pos += 1
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                brackets += 1
            } else if byte == UInt8(ascii: "]") {
                brackets -= 1
            } else if byte == UInt8(ascii: ">"), brackets <= 0 {
                return
            }
        }
        throw error(.truncated, "unterminated <!DOCTYPE>", at: start)
    }

    private func hasPrefix(_ prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard pos + length <= end else { return false }
        return equals(UnsafeBufferPointer(start: base + pos, count: length), prefix)
    }

    /// The offset of the next `needle` at or after `from`.
    private func find(_ needle: StaticString, from: Int) -> Int? {
        let length = needle.utf8CodeUnitCount
        let first = needle.utf8Start[0]
        var index = from
        while index + length <= end {
            if base[index] == first, equals(UnsafeBufferPointer(start: base + index, count: length), needle) {
                return index
            }
            index += 1
        }
        return nil
    }

    // MARK: - Errors

    private func error(_ kind: PropertyListError.Kind, _ message: String, at offset: Int? = nil) -> PropertyListError {
        .text(kind, message, at: offset ?? pos, in: UnsafeBufferPointer(start: base, count: end))
    }

    private func unexpectedText() -> PropertyListError {
        var stop = pos
        while stop < end, stop - pos < 20, base[stop] != UInt8(ascii: "<"), base[stop] != UInt8(ascii: "\n") {
            stop += 1
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + pos, count: stop - pos), as: UTF8.self)
        return error(.syntax, "unexpected text \"\(text)\" where a value is expected")
    }

    private func quoted(_ text: UnsafeBufferPointer<UInt8>) -> String {
        let shown = String(decoding: UnsafeBufferPointer(rebasing: text.prefix(40)), as: UTF8.self)
        return "\"" + shown + (text.count > 40 ? "…" : "") + "\""
    }
}
