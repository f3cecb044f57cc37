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

        /// The tag's name, for messages; `other` has none of its own.
        var name: StaticString {
            switch self {
            case .plist: "plist"
            case .dict: "dict"
            case .array: "array"
            case .key: "key"
            case .string: "string"
            case .integer: "integer"
            case .real: "real"
            case .true: "true"
            case .false: "false"
            case .date: "date"
            case .data: "data"
            case .other: "?"
            }
        }

        /// The name's bytes read as a little-endian word (first byte lowest), and how many there
        /// are: a tag in the text is then recognized with one masked compare.
        var nameWord: (word: UInt64, length: Int) {
            switch self {
            case .plist: (0x74_7369_6C70, 5)
            case .dict: (0x7463_6964, 4)
            case .array: (0x79_6172_7261, 5)
            case .key: (0x79_656B, 3)
            case .string: (0x676E_6972_7473, 6)
            case .integer: (0x72_6567_6574_6E69, 7)
            case .real: (0x6C61_6572, 4)
            case .true: (0x6575_7274, 4)
            case .false: (0x65_736C_6166, 5)
            case .date: (0x6574_6164, 4)
            case .data: (0x6174_6164, 4)
            case .other: (0, 0)
            }
        }

        /// Whether `word`, bytes of the text read as a little-endian word, starts with the name.
        @inline(__always)
        func isName(atStartOf word: UInt64) -> Bool {
            let (name, length) = nameWord
            return word & ((1 << UInt64(8 * length)) - 1) == name
        }
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
            try expectClosingTag(.plist)
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
            return .string(open.isEmpty ? "" : try readString(closing: .string))
        case .integer:
            let text = try requiredContent(open)
            switch NumberText.parseInteger(text) {
            case .value(let value): return value
            case .invalid: throw error(.syntax, "invalid <integer> \(quoted(text))", at: open.offset)
            case .overflow:
                throw error(.outOfRange, "<integer> \(quoted(text)) does not fit in 64 bits", at: open.offset)
            }
        case .real:
            let text = try requiredContent(open)
            guard let value = NumberText.parseReal(text) else {
                throw error(.syntax, "invalid <real> \(quoted(text))", at: open.offset)
            }
            return .real(value)
        case .true:
            if !open.isEmpty { try expectEmptyContent(.true) }
            return .boolean(true)
        case .false:
            if !open.isEmpty { try expectEmptyContent(.false) }
            return .boolean(false)
        case .date:
            let text = try requiredContent(open)
            guard let interval = NumberText.parseISODate(text) else {
                throw error(.syntax, "invalid <date> \(quoted(text)); expected yyyy-MM-ddTHH:mm:ssZ", at: open.offset)
            }
            return .date(Date(timeIntervalSinceReferenceDate: interval))
        case .data:
            if open.isEmpty { return .data(Data()) }
            let text = try readContent(closing: .data)
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
                try expectClosingTag(.array)
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
                try expectClosingTag(.dict)
                return dictionary
            }
            let keyTag = try readOpenTag()
            guard keyTag.tag == .key else {
                throw error(.syntax, "expected <key> in <dict>, found \(tagName(keyTag))", at: keyTag.offset)
            }
            let key = keyTag.isEmpty ? "" : try readString(closing: .key)
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
        let raw = UnsafeRawPointer(base)
        // Eight bytes at a time, each `<` in them looked at as the word it starts (tags are a few
        // bytes apart: too close for `memchr` to pay off). The last 16 bytes are not looked at;
        // an entry there would only be missing from the count.
        scan: while index + 16 <= end {
            var marks = Self.lessThanSigns(in: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            while marks != 0 {
                let at = index + marks.trailingZeroBitCount / 8
                marks &= marks - 1
                let tag = raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                if starts(tag, .key) {
                    if nesting == 0 { count += 1 }
                } else if starts(tag, .dict) {
                    if !isSelfClosing(from: at) { nesting += 1 }
                } else if starts(tag, .dict, closing: true) {
                    if nesting == 0 { break scan }
                    nesting -= 1
                } else if (tag >> 8) & 0xFF == UInt64(UInt8(ascii: "!")) {
                    // A comment or a CDATA section: skip to its end, whatever it holds.
                    let closing: StaticString = (tag >> 16) & 0xFF == UInt64(UInt8(ascii: "[")) ? "]]>" : "-->"
                    guard let close = find(closing, from: at + 2) else { break scan }
                    index = close + closing.utf8CodeUnitCount
                    continue scan
                }
            }
            index += 8
        }
        return min(count, (end - start) / 13)
    }

    /// The high bit of each byte of `word` that is `<`, and no other bit.
    @inline(__always)
    private static func lessThanSigns(in word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let difference = word ^ 0x3C3C_3C3C_3C3C_3C3C  // zero bytes where `word` has '<'
        // Adding 0x7F to the low seven bits carries into the high bit of every byte but a zero one.
        return ~(((difference & ones) &+ ones) | difference | ones)
    }

    /// Whether `word`, the bytes from a `<` read as a little-endian word, starts `<name` (or
    /// `</name` when `closing`) and the name ends there. The prefix must fit in the word.
    @inline(__always)
    private func starts(_ word: UInt64, _ tag: Tag, closing: Bool = false) -> Bool {
        let opening: (bytes: UInt64, count: Int) = closing ? (0x2F3C, 2) : (0x3C, 1)  // "</" or "<"
        let openingBits = UInt64(8 * opening.count)
        return word & ((1 << openingBits) - 1) == opening.bytes && tag.isName(atStartOf: word >> openingBits)
            && !isNameByte(UInt8(truncatingIfNeeded: word >> (openingBits + UInt64(8 * tag.nameWord.length))))
    }

    /// Whether the tag whose name starts at `index` ends with `/>`.
    private func isSelfClosing(from index: Int) -> Bool {
        var index = index
        while index < end, base[index] != UInt8(ascii: ">") { index += 1 }
        return index < end && base[index - 1] == UInt8(ascii: "/")
    }

    // MARK: - Tags

    /// Whether `byte` can be part of a tag name: a letter, a digit, `-`, `_`, `:`, `.` or any
    /// byte of a non-ASCII character; one bit per ASCII byte, looked up without a branch.
    @inline(__always)
    private func isNameByte(_ byte: UInt8) -> Bool {
        // Bits 45 `-`, 46 `.`, 48–57 digits, 58 `:`; then 65–90 `A`–`Z`, 95 `_`, 97–122 `a`–`z`.
        let low: UInt64 = 0x07FF_6000_0000_0000
        let high: UInt64 = 0x07FF_FFFE_87FF_FFFE
        return byte >= 0x80 || ((byte < 64 ? low : high) >> UInt64(byte & 63)) & 1 != 0
    }

    /// Whether `pos` is at `</`.
    @inline(__always)
    private func isClosingTag() -> Bool {
        pos + 1 < end && base[pos] == UInt8(ascii: "<") && base[pos + 1] == UInt8(ascii: "/")
    }

    /// Reads `<name attr="...">` or `<name/>` at `pos`, which must be at `<`.
    @inline(__always)
    private mutating func readOpenTag() throws(PropertyListError) -> OpenTag {
        if let open = readPlainOpenTag() { return open }
        return try readAnyOpenTag()
    }

    /// `<name>` or `<name/>` of a value tag with nothing else in it, as writers write them between
    /// all values: recognized by comparing words, or `nil` to leave the tag to the general path.
    @inline(__always)
    private mutating func readPlainOpenTag() -> OpenTag? {
        guard pos + 16 <= end else { return nil }
        let word = UnsafeRawPointer(base + pos + 1).loadUnaligned(as: UInt64.self)
        let tag: Tag
        switch UInt8(truncatingIfNeeded: word) {
        case UInt8(ascii: "k"): tag = .key
        case UInt8(ascii: "s"): tag = .string
        case UInt8(ascii: "i"): tag = .integer
        case UInt8(ascii: "r"): tag = .real
        case UInt8(ascii: "t"): tag = .true
        case UInt8(ascii: "f"): tag = .false
        case UInt8(ascii: "a"): tag = .array
        case UInt8(ascii: "d"):
            switch word & 0xFFFF_FFFF {
            case Tag.dict.nameWord.word: tag = .dict
            case Tag.date.nameWord.word: tag = .date
            case Tag.data.nameWord.word: tag = .data
            default: return nil
            }
        default: return nil
        }
        guard tag.isName(atStartOf: word) else { return nil }
        let length = tag.nameWord.length
        let offset = pos
        let after = pos + 1 + length
        if base[after] == UInt8(ascii: ">") {
            pos = after + 1
            return OpenTag(tag: tag, isEmpty: false, offset: offset, nameStart: offset + 1, nameLength: length)
        }
        if base[after] == UInt8(ascii: "/"), base[after + 1] == UInt8(ascii: ">") {
            pos = after + 2
            return OpenTag(tag: tag, isEmpty: true, offset: offset, nameStart: offset + 1, nameLength: length)
        }
        return nil
    }

    private mutating func readAnyOpenTag() throws(PropertyListError) -> OpenTag {
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
    private mutating func expectClosingTag(_ tag: Tag) throws(PropertyListError) {
        // The common case, `</name>`, in one masked compare of the name.
        let length = tag.nameWord.length
        if pos + 16 <= end, isClosingTag(),
            tag.isName(atStartOf: UnsafeRawPointer(base + pos + 2).loadUnaligned(as: UInt64.self)),
            base[pos + 2 + length] == UInt8(ascii: ">")
        {
            pos += length + 3
            return
        }
        let name = tag.name
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
    private mutating func expectEmptyContent(_ tag: Tag) throws(PropertyListError) {
        while pos < end, NumberText.isSpace(base[pos]) { pos += 1 }
        try expectClosingTag(tag)
    }

    // MARK: - Content

    /// The raw text up to the closing tag; for numbers, dates and data, which have no entities.
    private mutating func readContent(closing tag: Tag) throws(PropertyListError) -> UnsafeBufferPointer<UInt8> {
        let start = pos
        while pos < end, base[pos] != UInt8(ascii: "<") { pos += 1 }
        guard pos < end else { throw error(.truncated, "the document ends inside <\(tag.name)>", at: start) }
        let text = UnsafeBufferPointer(start: base + start, count: pos - start)
        try expectClosingTag(tag)
        return text
    }

    /// The content of `open`, which must not be empty (`<integer/>` is an error).
    private mutating func requiredContent(_ open: OpenTag) throws(PropertyListError) -> UnsafeBufferPointer<UInt8> {
        guard !open.isEmpty else { throw error(.syntax, "empty <\(open.tag.name)>", at: open.offset) }
        return try readContent(closing: open.tag)
    }

    /// Reads the text of a `<string>` or `<key>`, decoding entities and CDATA.
    private mutating func readString(closing tag: Tag) throws(PropertyListError) -> String {
        let name = tag.name
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
            // The common case: plain text, one String straight from the bytes (copied in place:
            // a fifth cheaper than `String(decoding:as:)` for the short ones).
            let text = UnsafeBufferPointer(start: base + start, count: index - start)
            let string = String(unsafeUninitializedCapacity: text.count) { $0.initialize(fromContentsOf: text) }
            try expectClosingTag(tag)
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
                    try expectClosingTag(tag)
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
