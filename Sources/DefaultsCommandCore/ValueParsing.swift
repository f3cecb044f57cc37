import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// What `defaults write domain key …` does to the key.
package enum WriteValue {
    /// Sets the key to the value.
    case set(PropertyListValue)
    /// `-array-add`: appends the elements to the array stored under the key (or creates it).
    case arrayAdd([PropertyListValue])
    /// `-dict-add`: adds the entries to the dictionary stored under the key (or creates it).
    case dictionaryAdd([String: PropertyListValue])
}

/// Reads the values of `defaults write` from its arguments: the type flags (`-string`, `-data`,
/// `-int`/`-integer`, `-float`, `-bool`/`-boolean`, `-date`, `-array`, `-array-add`, `-dict`,
/// `-dict-add`) and bare values in property-list syntax.
package enum ValueParsing {
    /// The flags that type the single value after them.
    package static let scalarFlags: Set<String> = [
        "-string", "-data", "-int", "-integer", "-float", "-bool", "-boolean", "-date",
    ]

    /// The value given by `words`, everything after the key.
    package static func writeValue(_ words: [String]) throws(CommandFailure) -> WriteValue {
        guard let first = words.first else {
            throw CommandFailure.usage("Missing value", "defaults write <domain> <key> <value>")
        }
        let rest = Array(words.dropFirst())
        switch first {
        case "-array":
            return .set(.array(try elements(rest)))
        case "-array-add":
            return .arrayAdd(try elements(rest))
        case "-dict":
            return .set(.dictionary(try entries(rest)))
        case "-dict-add":
            return .dictionaryAdd(try entries(rest))
        default:
            var index = 0
            let value = try element(words, at: &index)
            if index < words.count {
                throw CommandFailure.usage(
                    "Unexpected argument \(words[index]) after the value; quote a value that holds spaces",
                    "defaults write <domain> <key> <value>"
                )
            }
            return .set(value)
        }
    }

    /// The elements of `-array` and `-array-add`: each a bare value or a typed one (`-int 5`).
    package static func elements(_ words: [String]) throws(CommandFailure) -> [PropertyListValue] {
        var result: [PropertyListValue] = []
        var index = 0
        while index < words.count {
            result.append(try element(words, at: &index))
        }
        return result
    }

    /// The entries of `-dict` and `-dict-add`: keys, each followed by a bare or typed value.
    package static func entries(_ words: [String]) throws(CommandFailure) -> [String: PropertyListValue] {
        var result: [String: PropertyListValue] = [:]
        var index = 0
        while index < words.count {
            let key = words[index]
            index += 1
            guard index < words.count else {
                throw CommandFailure.usage(
                    "Key \(key) lacks a corresponding value", "defaults write <domain> <key> -dict <key> <value> …")
            }
            result[key] = try element(words, at: &index)
        }
        return result
    }

    /// One value starting at `words[index]`, typed by a flag or bare; moves `index` past it.
    package static func element(_ words: [String], at index: inout Int) throws(CommandFailure) -> PropertyListValue {
        let word = words[index]
        index += 1
        guard scalarFlags.contains(word) else {
            try rejectMistypedFlag(word)
            return try bareValue(word)
        }
        guard index < words.count else {
            throw CommandFailure.usage("Missing value after \(word)", "defaults write <domain> <key> \(word) <value>")
        }
        let text = words[index]
        index += 1
        return try typedValue(flag: word, text)
    }

    /// The flags that type a whole collection; they come right after the key.
    package static let collectionFlags: Set<String> = ["-array", "-array-add", "-dict", "-dict-add"]

    /// Refuses a word shaped like a type flag (`-interger`) that is none, rather than storing it as
    /// a string: a mistyped flag would otherwise write the wrong value. `-string -word` stores
    /// such a word.
    package static func rejectMistypedFlag(_ word: String) throws(CommandFailure) {
        let name = word.dropFirst()
        guard word.hasPrefix("-"), let first = name.first, first.isASCII, first.isLetter,
            name.allSatisfy({ $0 == "-" || ($0.isASCII && $0.isLetter) })
        else { return }
        let usage = "defaults write <domain> <key> -string|-data|-int|-float|-bool|-date <value>"
        if collectionFlags.contains(word) {
            throw CommandFailure.usage("\(word) must come right after the key; nothing was written", usage)
        }
        var message = "Unknown type flag \(word); nothing was written"
        if let suggestion = closestFlag(to: word) {
            message += ". Did you mean \(suggestion)?"
        }
        message += " To store the text \(word), write -string \(word)."
        throw CommandFailure.usage(message, usage)
    }

    /// The known flag closest to a mistyped one, when it is close enough to be what was meant.
    package static func closestFlag(to word: String) -> String? {
        let candidates = scalarFlags.union(collectionFlags).sorted()
        let scored = candidates.map { (flag: $0, distance: editDistance(Array(word.utf8), Array($0.utf8))) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= max(2, word.count / 3) else {
            return nil
        }
        return best.flag
    }

    /// The Levenshtein distance: insertions, deletions and substitutions.
    private static func editDistance(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        var previous = Array(0...rhs.count)
        for (i, left) in lhs.enumerated() {
            var current = [i + 1]
            for (j, right) in rhs.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1)))
            }
            previous = current
        }
        return previous[rhs.count]
    }

    /// The value of a type flag: `-int 5`, `-bool yes`, `-data 0a1b`, …
    package static func typedValue(flag: String, _ text: String) throws(CommandFailure) -> PropertyListValue {
        switch flag {
        case "-string":
            return .string(text)
        case "-int", "-integer":
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if let integer = Int(trimmed) { return .integer(integer) }
            if let integer = UInt64(trimmed) { return .unsignedInteger(integer) }
            throw mismatch(text, flag: flag, "an integer, such as 42 or -7")
        case "-float":
            guard let real = Double(text.trimmingCharacters(in: .whitespaces)) else {
                throw mismatch(text, flag: flag, "a number, such as 1.5 or -2e3")
            }
            return .real(real)
        case "-bool", "-boolean":
            switch text.lowercased() {
            case "yes", "true", "1": return .boolean(true)
            case "no", "false", "0": return .boolean(false)
            default: throw mismatch(text, flag: flag, "yes, no, true, false, 1 or 0")
            }
        case "-date":
            guard let date = date(text) else {
                throw mismatch(text, flag: flag, "a date such as \"2024-05-06 07:08:09 +0000\" or 2024-05-06T07:08:09Z")
            }
            return .date(date)
        case "-data":
            guard let data = hexData(text) else {
                throw mismatch(text, flag: flag, "hexadecimal bytes, such as 0a1bff")
            }
            return .data(data)
        default:
            throw CommandFailure("Unknown type flag \(flag)")
        }
    }

    private static func mismatch(_ text: String, flag: String, _ expected: String) -> CommandFailure {
        CommandFailure("Could not parse: \(text).  The value of \(flag) must be \(expected).")
    }

    /// The value `text` stands for as a value of `type`: `14` as an integer for an integer,
    /// `yes` as a boolean for a boolean, any text as a string for a string, hexadecimal bytes for
    /// data; collections, and values of no known type, take property-list syntax
    /// (``bareValue(_:)``), which is not checked to be of `type`.
    package static func value(_ text: String, as type: StoredType?) throws(CommandFailure) -> PropertyListValue {
        let flag: String
        switch type {
        case .string: return .string(text)
        case .integer: flag = "-int"
        case .real: flag = "-float"
        case .boolean: flag = "-bool"
        case .date: flag = "-date"
        case .data: flag = "-data"
        case .array, .dictionary, nil: return try bareValue(text)
        }
        return try typedValue(flag: flag, text)
    }

    /// A value in property-list syntax: old-style text (`(1, 2)`, `{ a = 1; }`, `"a b"`, a bare
    /// word, which is a string) or an XML fragment (`<integer>5</integer>`). Text that is not
    /// property-list syntax and does not start like a structure is taken as a string, as macOS
    /// takes `defaults write domain key 'hello world'`.
    package static func bareValue(_ text: String) throws(CommandFailure) -> PropertyListValue {
        do {
            return try PropertyList.parseTextValue(text)
        } catch {
            let start = text.drop { $0.isWhitespace }.first
            if let start, "{(<\"".contains(start) {
                throw CommandFailure.couldNotParse(text)
            }
            return .string(text)
        }
    }

    /// A whole domain in property-list syntax: `defaults write domain '{ key = value; }'`.
    package static func domainValues(_ text: String) throws(CommandFailure) -> [String: PropertyListValue] {
        let value: PropertyListValue
        do {
            value = try PropertyList.parseTextValue(text)
        } catch {
            throw CommandFailure.couldNotParse(text)
        }
        guard case .dictionary(let values) = value else {
            throw CommandFailure("Rep argument is not a dictionary", then: "Defaults have not been changed.")
        }
        return values
    }

    /// Hexadecimal bytes, with optional `<…>` around them, `0x` before them and spaces between.
    package static func hexData(_ text: String) -> Data? {
        var digits = Substring(text.filter { !$0.isWhitespace })
        if digits.hasPrefix("<"), digits.hasSuffix(">") {
            digits = digits.dropFirst().dropLast()
        }
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            digits = digits.dropFirst(2)
        }
        guard digits.count.isMultiple(of: 2), digits.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }

    /// A date as `defaults read` prints one (`2024-05-06 07:08:09 +0000`), in ISO 8601
    /// (`2024-05-06T07:08:09Z`, with an offset or fractional seconds), or without a time zone
    /// (`2024-05-06 07:08:09`, `2024-05-06`), then in the local time zone.
    package static func date(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let iso = ISO8601DateFormatter()
        if let date = iso.date(from: trimmed) { return date }
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = iso.date(from: trimmed) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.isLenient = false
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return date }
        }
        return nil
    }
}
