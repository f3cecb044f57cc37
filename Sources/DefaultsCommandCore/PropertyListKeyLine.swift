import Foundation

/// Where a key of a domain's top-level dictionary is written in its file, so that `defaults
/// explain` can point an editor at it.
package enum PropertyListKeyLine {
    /// Where `key` is written in the property list `data`.
    package enum Location: Equatable {
        /// The 1-based line of the `<key>` element naming it in the top-level dictionary of an
        /// XML property list.
        case line(Int)
        /// A binary property list, which has no lines.
        case binary
        /// Not found: an old-style text property list, or text this scan does not follow.
        case unknown
    }

    /// Finds `key` among the top-level dictionary's keys of an XML property list, following
    /// the nesting of `<dict>` and `<array>` so that a key of a nested dictionary is never taken
    /// for it, and passing over comments, processing instructions and CDATA sections.
    package static func locate(_ key: String, in data: Data) -> Location {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) {
            return .binary
        }
        var index = 0
        var line = 1
        var depth = 0
        /// Moves past `terminator`, counting lines; `false` when the text ends first.
        func skip(past terminator: [UInt8]) -> Bool {
            while index < bytes.count {
                if bytes[index...].starts(with: terminator) {
                    index += terminator.count
                    return true
                }
                if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                index += 1
            }
            return false
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                if byte == UInt8(ascii: "\n") { line += 1 }
                index += 1
                continue
            }
            if let terminator = Self.endOfMarkup(startingAt: bytes[index...]) {
                guard skip(past: terminator) else { return .unknown }
                continue
            }
            let tagLine = line
            let start = index + 1
            guard skip(past: Array(">".utf8)) else { return .unknown }
            let tag = bytes[start..<(index - 1)]
            guard tag.last != UInt8(ascii: "/") else { continue }  // <dict/>, <true/>
            let isClosing = tag.first == UInt8(ascii: "/")
            let name = String(
                decoding: tag.drop { $0 == UInt8(ascii: "/") }.prefix { !Self.isSpace($0) }, as: UTF8.self)
            if name == "dict" || name == "array" {
                depth += isClosing ? -1 : 1
            } else if name == "key", !isClosing, depth == 1 {
                let textStart = index
                guard let end = Self.find(Array("</key>".utf8), in: bytes, from: textStart) else { return .unknown }
                if Self.decodeEntities(String(decoding: bytes[textStart..<end], as: UTF8.self)) == key {
                    return .line(tagLine)
                }
            }
        }
        return .unknown
    }

    /// What ends the comment, CDATA section, processing instruction or declaration that `rest`
    /// starts with; `nil` when it starts with an element's tag.
    private static func endOfMarkup(startingAt rest: ArraySlice<UInt8>) -> [UInt8]? {
        let ends: [(start: String, end: String)] = [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", ">"), ("<!", ">")]
        return ends.first { rest.starts(with: $0.start.utf8) }.map { Array($0.end.utf8) }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index...].starts(with: needle) { return index }
            index += 1
        }
        return nil
    }

    /// The text of an XML element with its five named entities and character references
    /// replaced, as a property-list reader reads a key.
    package static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            let named = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
            if let replacement = named[String(entity)] {
                result += replacement
            } else if entity.hasPrefix("#x") || entity.hasPrefix("#X"),
                let code = UInt32(entity.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code)
            {
                result.unicodeScalars.append(scalar)
            } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                result.unicodeScalars.append(scalar)
            } else {
                result += rest[ampersand...semicolon]
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
