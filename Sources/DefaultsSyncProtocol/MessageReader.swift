import Foundation

/// Reads the messages sent most (a device's push, a server's reply and change, a notification's
/// records) straight from the text's bytes, to the value `JSONDecoder` makes of them.
///
/// It takes plain JSON only: member names without escapes, each once; integers without a
/// fraction or an exponent; the members its types have. Anything else it leaves (returns `nil`),
/// and ``SyncProtocol/decode(_:from:)`` hands the text to `JSONDecoder`, which decodes it or says
/// what is wrong: so every text decodes as `JSONDecoder` decodes it, and a test holds the two
/// equal over random and damaged messages. A message's `limits` and `error` (a welcome, a
/// failure: once a connection) are left to `JSONDecoder` too.
struct MessageReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// `text` read as a `type` (``ServerMessage``, ``DeviceMessage`` or `[WireRecord]`), or `nil`
    /// when it is not plain JSON of one, or `type` is another.
    static func read<Message>(_ text: String, as type: Message.Type) -> Message? {
        let read = text.utf8.withContiguousStorageIfAvailable { bytes -> Any? in
            var reader = MessageReader(bytes)
            let message: Any?
            if type == ServerMessage.self {
                message = reader.serverMessage()
            } else if type == DeviceMessage.self {
                message = reader.deviceMessage()
            } else if type == [WireRecord].self {
                message = reader.array { $0.record() }
            } else {
                return nil
            }
            return reader.isAtEnd ? message : nil
        }
        return read.flatMap { $0 as? Message }
    }

    // MARK: Messages

    private enum ServerMember: String, Members {
        case kind, id, latest, records, stamps, refused, more, node
        static let all = allCases
    }

    private mutating func serverMessage() -> ServerMessage? {
        var kind: ServerMessage.Kind?
        var message = ServerMessage(kind: .reply)
        let isRead = members { (reader, member: ServerMember) in
            switch member {
            case .kind:
                kind = reader.string().flatMap(ServerMessage.Kind.init(rawValue:))
                return kind != nil
            case .id: return reader.optional(&message.id) { $0.integer().flatMap(Int.init(exactly:)) }
            case .latest: return reader.optional(&message.latest) { $0.integer() }
            case .records: return reader.optional(&message.records) { $0.array { $0.record() } }
            case .stamps: return reader.optional(&message.stamps) { $0.array { $0.stamp() } }
            case .refused: return reader.optional(&message.refused) { $0.stringsByName() }
            case .more: return reader.optional(&message.more) { $0.boolean() }
            case .node: return reader.optional(&message.node) { $0.string() }
            }
        }
        guard isRead, let kind else { return nil }
        message.kind = kind
        return message
    }

    private enum DeviceMember: String, Members {
        case id, kind, records, keys, after, afterKey, limit
        static let all = allCases
    }

    private mutating func deviceMessage() -> DeviceMessage? {
        var id: Int?
        var kind: DeviceMessage.Kind?
        var message = DeviceMessage(id: 0, kind: .push)
        let isRead = members { (reader, member: DeviceMember) in
            switch member {
            case .id:
                id = reader.integer().flatMap(Int.init(exactly:))
                return id != nil
            case .kind:
                kind = reader.string().flatMap(DeviceMessage.Kind.init(rawValue:))
                return kind != nil
            case .records: return reader.optional(&message.records) { $0.array { $0.record() } }
            case .keys: return reader.optional(&message.keys) { $0.array { $0.string() } }
            case .after: return reader.optional(&message.after) { $0.integer() }
            case .afterKey: return reader.optional(&message.afterKey) { $0.string() }
            case .limit: return reader.optional(&message.limit) { $0.integer().flatMap(Int.init(exactly:)) }
            }
        }
        guard isRead, let id, let kind else { return nil }
        (message.id, message.kind) = (id, kind)
        return message
    }

    private enum RecordMember: String, Members {
        case key, value, wall, counter, origin, seq
        static let all = allCases
    }

    /// A record, or with `isStamp` a stamp's members only (a record without value or number).
    private mutating func record(isStamp: Bool = false) -> WireRecord? {
        var key: String?
        var value: Data?
        var wall: Int64?
        var counter: Int64?
        var origin: String?
        var seq: Int64?
        let isRead = members { (reader, member: RecordMember) in
            switch member {
            case .key:
                key = reader.string()
                return key != nil
            // Base64, decoded as JSONDecoder decodes `Data`.
            case .value:
                return !isStamp && reader.optional(&value) { $0.string().flatMap { Data(base64Encoded: $0) } }
            case .wall:
                wall = reader.integer()
                return wall != nil
            case .counter:
                counter = reader.integer()
                return counter != nil
            case .origin:
                origin = reader.string()
                return origin != nil
            case .seq: return !isStamp && reader.optional(&seq) { $0.integer() }
            }
        }
        guard isRead, let key, let wall, let counter, let origin else { return nil }
        return WireRecord(key: key, value: value, wall: wall, counter: counter, origin: origin, seq: seq)
    }

    private mutating func stamp() -> WireStamp? {
        record(isStamp: true).map { WireStamp(key: $0.key, wall: $0.wall, counter: $0.counter, origin: $0.origin) }
    }

    /// An object of strings by name, each name once.
    private mutating func stringsByName() -> [String: String]? {
        var strings: [String: String] = [:]
        guard take(.openBrace) else { return nil }
        if take(.closeBrace) { return strings }
        repeat {
            guard let name = string(), take(.colon), let string = string(),
                strings.updateValue(string, forKey: name) == nil
            else { return nil }
        } while take(.comma)
        return take(.closeBrace) ? strings : nil
    }

    // MARK: JSON

    /// Reads an object, handing each member to `member`, which reads its value; false when a
    /// name is not a `Member`'s or comes twice (JSONDecoder's choice between them is its own),
    /// or `member` refuses the value.
    private mutating func members<Member: Members>(_ member: (inout MessageReader, Member) -> Bool) -> Bool {
        guard take(.openBrace) else { return false }
        if take(.closeBrace) { return true }
        var seen: UInt64 = 0
        repeat {
            guard let name = plainName(), take(.colon),
                let (number, found) = Member.all.enumerated().first(where: {
                    bytes[name].elementsEqual($0.element.rawValue.utf8)
                }),
                seen & (1 << number) == 0
            else { return false }
            seen |= 1 << number
            guard member(&self, found) else { return false }
        } while take(.comma)
        return take(.closeBrace)
    }

    /// A member's name without escapes: where its bytes are.
    private mutating func plainName() -> Range<Int>? {
        guard take(.quote) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == .quote {
                index += 1
                return start..<(index - 1)
            }
            guard byte != .backslash, byte >= 0x20 else { return nil }
            index += 1
        }
        return nil
    }

    /// A value that may be `null`, read into `field`.
    private mutating func optional<Value>(_ field: inout Value?, _ read: (inout MessageReader) -> Value?) -> Bool {
        if literal("null") {
            field = nil
            return true
        }
        field = read(&self)
        return field != nil
    }

    private mutating func array<Element>(_ element: (inout MessageReader) -> Element?) -> [Element]? {
        guard take(.openBracket) else { return nil }
        var elements: [Element] = []
        if take(.closeBracket) { return elements }
        repeat {
            guard let next = element(&self) else { return nil }
            elements.append(next)
        } while take(.comma)
        return take(.closeBracket) ? elements : nil
    }

    /// A string, its escapes undone; `nil` for what JSON does not allow in one (a control
    /// character, an unknown escape, half of a surrogate pair).
    private mutating func string() -> String? {
        guard take(.quote) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == .quote {
                index += 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]), as: UTF8.self)
            }
            if byte == .backslash { return escapedString(from: start) }
            guard byte >= 0x20 else { return nil }
            index += 1
        }
        return nil
    }

    /// The rest of a string from its first escape, at `index`.
    private mutating func escapedString(from start: Int) -> String? {
        var unescaped = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case .quote:
                return String(decoding: unescaped, as: UTF8.self)
            case .backslash:
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case .quote, .backslash, .slash: unescaped.append(escape)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar() else { return nil }
                    UTF8.encode(scalar) { unescaped.append($0) }
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                unescaped.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\u` escape (its `\u` read), with the low half of a surrogate pair.
    private mutating func escapedScalar() -> Unicode.Scalar? {
        guard let unit = hexUnit() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard index + 1 < bytes.count, bytes[index] == .backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                return nil
            }
            index += 2
            guard let low = hexUnit(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    /// Four hexadecimal digits.
    private mutating func hexUnit() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var unit: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt32(digit)
        }
        index += 4
        return unit
    }

    /// An integer of JSON's grammar (no leading zero) that fits in 64 bits, with no fraction or
    /// exponent after it.
    private mutating func integer() -> Int64? {
        skipSpace()
        let isNegative = index < bytes.count && bytes[index] == .minus
        if isNegative { index += 1 }
        let start = index
        var value: Int64 = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int64(bytes[index] - UInt8(ascii: "0"))
            let (tens, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowedAgain) =
                isNegative ? tens.subtractingReportingOverflow(digit) : tens.addingReportingOverflow(digit)
            guard !overflowed, !overflowedAgain else { return nil }
            value = next
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        guard index == bytes.count || !Self.fractionOrExponent(bytes[index]) else { return nil }
        return value
    }

    private static func fractionOrExponent(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }

    private mutating func boolean() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// Whether `word` comes next, read if it does.
    private mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            bytes[index..<(index + count)].elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: count))
        else { return false }
        index += count
        return true
    }

    /// Whether `byte` comes next (after spaces), read if it does.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Skips JSON's four spaces: space, tab, line feed, carriage return.
    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Whether nothing but spaces follows.
    private var isAtEnd: Bool {
        mutating get {
            skipSpace()
            return index == bytes.count
        }
    }
}

/// The members of an object the reader takes, by name.
private protocol Members: RawRepresentable<String>, CaseIterable {
    /// Every member, in a list made once (`allCases` makes one at each use).
    static var all: [Self] { get }
}

extension UInt8 {
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let minus = UInt8(ascii: "-")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let closeBracket = UInt8(ascii: "]")
}
