import Foundation
import TestSupport
import Testing

@testable import DefaultsSyncProtocol

/// The messages' own reader gives what `JSONDecoder` gives, for every text it reads, and leaves
/// the rest to it: random messages in every layout, the same damaged byte by byte, and the JSON
/// corners it must leave alone.
struct MessageReaderTests {
    /// A value as the protocol's encoder writes it (keys sorted): equal texts, equal values.
    static func canonical(_ value: some Encodable) -> String {
        (try? SyncProtocol.encode(value)) ?? "not encodable"
    }

    /// The reader's answer for `text`, checked against `JSONDecoder`'s: when it reads the text,
    /// JSONDecoder decodes the same value. Returns whether the reader read it.
    @discardableResult
    static func agrees<Message: Codable>(_ text: String, as type: Message.Type) -> Bool {
        let read = MessageReader.read(text, as: type)
        let decoded = try? JSONDecoder().decode(type, from: Data(text.utf8))
        if let read {
            let expected: String? = if let decoded { canonical(decoded) } else { nil }
            let (got, name) = (canonical(read), String(describing: type))
            #expect(expected == got, "\(name) read differently from \(text)")
        }
        return read != nil
    }

    /// Encoders of every layout a sender could use: sorted or not, spaced, slashes escaped or not.
    static let encoders: [JSONEncoder] = [
        [.sortedKeys], [], [.prettyPrinted], [.withoutEscapingSlashes, .sortedKeys], [.prettyPrinted, .sortedKeys],
    ].map { (formatting: JSONEncoder.OutputFormatting) in
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting
        return encoder
    }

    @Test func randomMessagesInEveryLayoutAreReadAsJSONDecoderReadsThem() throws {
        var messages = MessageGenerator(seed: 0x5EED)
        for round in 0..<400 {
            let encoder = Self.encoders[round % Self.encoders.count]
            let server = messages.serverMessage()
            let device = messages.deviceMessage()
            let records = messages.records()
            let serverText = String(decoding: try encoder.encode(server), as: UTF8.self)
            let deviceText = String(decoding: try encoder.encode(device), as: UTF8.self)
            let recordsText = String(decoding: try encoder.encode(records), as: UTF8.self)
            // Plain JSON, each of them: read, not left to JSONDecoder.
            #expect(Self.agrees(serverText, as: ServerMessage.self), "\(serverText)")
            #expect(Self.agrees(deviceText, as: DeviceMessage.self), "\(deviceText)")
            #expect(Self.agrees(recordsText, as: [WireRecord].self), "\(recordsText)")
            #expect(
                Self.canonical(try SyncProtocol.decode(ServerMessage.self, from: serverText)) == Self.canonical(server))
        }
    }

    @Test func damagedMessagesAreReadAsJSONDecoderReadsThemOrLeftToIt() throws {
        var messages = MessageGenerator(seed: 0xBAD)
        var random = SeededGenerator(seed: 0xDA4A6E)
        // What a damage puts in: JSON's own punctuation, digits, escapes, spaces, base64's padding.
        let inserted = Array(#"{}[]:,"\/-.0159eEnulltruefalsAZaz=+ u"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9]
        var (read, refusedByBoth) = (0, 0)
        for round in 0..<3_000 {
            let text: String
            switch round % 3 {
            case 0: text = try SyncProtocol.encode(messages.serverMessage())
            case 1: text = try SyncProtocol.encode(messages.deviceMessage())
            default: text = try SyncProtocol.encode(messages.records())
            }
            var bytes = Array(text.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(inserted.randomElement(using: &random)!, at: at)
                case 2: bytes[at] = inserted.randomElement(using: &random)!
                default: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 12)], at: at)
                }
                if bytes.isEmpty { bytes = Array("{".utf8) }
            }
            let damaged = String(decoding: bytes, as: UTF8.self)
            let (wasRead, decodes): (Bool, Bool)
            switch round % 3 {
            case 0:
                wasRead = Self.agrees(damaged, as: ServerMessage.self)
                decodes = (try? SyncProtocol.decode(ServerMessage.self, from: damaged)) != nil
            case 1:
                wasRead = Self.agrees(damaged, as: DeviceMessage.self)
                decodes = (try? SyncProtocol.decode(DeviceMessage.self, from: damaged)) != nil
            default:
                wasRead = Self.agrees(damaged, as: [WireRecord].self)
                decodes = (try? SyncProtocol.decode([WireRecord].self, from: damaged)) != nil
            }
            if wasRead {
                read += 1
            } else if !decodes {
                refusedByBoth += 1
            }
        }
        // Neither side of the property went untested.
        #expect(read > 100 && refusedByBoth > 100, "read \(read), refused \(refusedByBoth)")
    }

    @Test func escapesAndNumbersAreReadAsJSONDecoderReadsThem() {
        let records = [
            #"[{"key":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t \u0000","wall":-0,"counter":0,"origin":"o"}]"#,
            #"[{"key":"k","value":"AAEC\/w==","wall":9223372036854775807,"counter":-9223372036854775808,"origin":""}]"#,
            #" [ { "key" : "k" , "value" : null , "wall" : 1 , "counter" : 2 , "origin" : "o" , "seq" : null } ] "#,
        ]
        for text in records {
            #expect(Self.agrees(text, as: [WireRecord].self), "\(text)")
        }
        let left = [
            #"[{"key":"\ud83d","wall":1,"counter":2,"origin":"o"}]"#,  // half a surrogate pair
            #"[{"key":"\x","wall":1,"counter":2,"origin":"o"}]"#,  // no such escape
            #"[{"key":"k","wall":1.0,"counter":2,"origin":"o"}]"#,  // a fraction
            #"[{"key":"k","wall":1e3,"counter":2,"origin":"o"}]"#,  // an exponent
            #"[{"key":"k","wall":01,"counter":2,"origin":"o"}]"#,  // a leading zero
            #"[{"key":"k","wall":9223372036854775808,"counter":2,"origin":"o"}]"#,  // over Int64
            #"[{"key":"k","key":"j","wall":1,"counter":2,"origin":"o"}]"#,  // a name twice
            #"[{"k\u0065y":"k","wall":1,"counter":2,"origin":"o"}]"#,  // an escaped name
            #"[{"key":"k","wall":1,"counter":2,"origin":"o","extra":1}]"#,  // a member it does not know
            #"[{"key":"\ude00","wall":1,"counter":2,"origin":"o"}]"#,  // the low half alone
            #"[{"key":"\ud83d\u0041","wall":1,"counter":2,"origin":"o"}]"#,  // a high half, then no low one
            #"[{"key":"k","wall":-,"counter":2,"origin":"o"}]"#,  // a sign without digits
            #"[{"key":"k","wall":-01,"counter":2,"origin":"o"}]"#,  // a leading zero after the sign
            #"[{"key":"k","wall":-9223372036854775809,"counter":2,"origin":"o"}]"#,  // under Int64
            #"[{"key":"k","wall":1,"counter":2,"origin":"o",}]"#,  // a trailing comma
            #"[{"key":"k","wall":1,"counter":2,"origin":"o"},]"#,  // a trailing comma in the list
            #"[{"key":"k","wall":1,"counter":2}]"#,  // no origin
            "[{\"key\":\"a\tb\",\"wall\":1,\"counter\":2,\"origin\":\"o\"}]",  // a raw tab in a string
            #"[{"key":"k","wall":1,"counter":2,"origin":"o"}] x"#,  // more after the value
        ]
        for text in left {
            #expect(!Self.agrees(text, as: [WireRecord].self), "\(text)")
        }
        // A stamp has no value: JSONDecoder ignores one, the reader leaves the text to it.
        let stampWithValue =
            #"{"kind":"reply","stamps":[{"key":"k","wall":1,"counter":2,"origin":"o","value":"AA=="}]}"#
        #expect(!Self.agrees(stampWithValue, as: ServerMessage.self))
        #expect((try? SyncProtocol.decode(ServerMessage.self, from: stampWithValue))?.stamps?.first?.key == "k")
    }

    @Test func aWelcomeAndAFailureAreLeftToJSONDecoderAndStillDecoded() throws {
        let welcome = ServerMessage(kind: .welcome, latest: 3, limits: .standard, node: "a")
        let failure = ServerMessage(kind: .failure, id: 4, error: ServiceFailure(.rateLimited, "slow down"))
        for message in [welcome, failure] {
            let text = try SyncProtocol.encode(message)
            #expect(MessageReader.read(text, as: ServerMessage.self) == nil)
            #expect(Self.canonical(try SyncProtocol.decode(ServerMessage.self, from: text)) == text)
        }
        #expect(throws: DecodingError.self) { try SyncProtocol.decode(ServerMessage.self, from: #"{"kind":"nope"}"#) }
    }
}

/// Random messages of every kind the reader takes, with the values that test a reader: empty,
/// extreme, escaped, beyond the Basic Multilingual Plane.
struct MessageGenerator {
    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    static let strings = [
        "", "k", "a/b", "quote\"d", "back\\slash", "tab\tline\nfeed", "\u{0}\u{1}\u{1F}\u{7F}", "café", "日本語",
        "😀👩‍👩‍👧", "\u{FFFF}", "\u{10FFFF}", "  spaced  ", "{\"json\":[1]}",
    ]

    mutating func string() -> String {
        var string = Self.strings.randomElement(using: &random)!
        if Bool.random(using: &random) { string += String(Int.random(in: 0...999, using: &random)) }
        return string
    }

    mutating func integer() -> Int64 {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: [0, -1, 1, .max, .min].randomElement(using: &random)!
        case 1: Int64.random(in: -1_000...1_000, using: &random)
        default: Int64.random(in: .min ... .max, using: &random)
        }
    }

    mutating func maybe<Value>(_ make: (inout MessageGenerator) -> Value) -> Value? {
        Bool.random(using: &random) ? make(&self) : nil
    }

    mutating func record() -> WireRecord {
        let value = maybe { generator in
            Data(
                (0..<Int.random(in: 0...40, using: &generator.random)).map { _ in
                    UInt8.random(in: 0...255, using: &generator.random)
                })
        }
        return WireRecord(
            key: string(), value: value, wall: integer(), counter: integer(), origin: string(),
            seq: maybe { $0.integer() })
    }

    mutating func records() -> [WireRecord] {
        (0..<Int.random(in: 0...6, using: &random)).map { _ in record() }
    }

    mutating func serverMessage() -> ServerMessage {
        ServerMessage(
            kind: [.reply, .changed].randomElement(using: &random)!, id: maybe { Int($0.integer()) },
            latest: maybe { $0.integer() },
            stamps: maybe { generator in
                (0..<Int.random(in: 0...4, using: &generator.random)).map { _ in
                    WireStamp(
                        key: generator.string(), wall: generator.integer(), counter: generator.integer(),
                        origin: generator.string())
                }
            },
            records: maybe { $0.records() },
            refused: maybe { generator in
                Dictionary(
                    (0..<Int.random(in: 0...3, using: &generator.random)).map { _ in
                        (generator.string(), generator.string())
                    }, uniquingKeysWith: { first, _ in first })
            },
            more: maybe { Bool.random(using: &$0.random) }, node: maybe { $0.string() })
    }

    mutating func deviceMessage() -> DeviceMessage {
        DeviceMessage(
            id: Int(integer()), kind: [.push, .stamps, .records, .changes].randomElement(using: &random)!,
            keys: maybe { generator in
                (0..<Int.random(in: 0...4, using: &generator.random)).map { _ in generator.string() }
            },
            after: maybe { $0.integer() }, records: maybe { $0.records() }, afterKey: maybe { $0.string() },
            limit: maybe { Int($0.integer()) })
    }
}
