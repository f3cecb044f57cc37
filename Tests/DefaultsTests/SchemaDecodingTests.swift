import Foundation
import Testing

@testable import DefaultsSchema

/// `DomainSchema.decode(from:)` reads a schema with a quick reader of its own and hands every
/// document that reader declines to `JSONDecoder`: these tests hold the two to one rule. The quick
/// reader must read what the writer writes, never accept a document `JSONDecoder` refuses, and
/// read what it accepts as `JSONDecoder` does; `decode(from:)` must then answer as `JSONDecoder`
/// does for every document, hostile ones included.
@Suite("schema decoding")
struct SchemaDecodingTests {
    /// A schema with every kind of value, in defaults, ranges and choices.
    static let richSchema = DomainSchema(
        domain: "com.example.rich",
        keys: [
            {
                var key = KeySchema(
                    name: "fontSize", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(12),
                    description: "The size of the editor's text, in points.",
                    allowedValues: .range(lowerBound: .integer(8), upperBound: .integer(72)), iCloud: true,
                    formerNames: ["textSize", "size", ""])
                key.formerNamesConvertedByProgram = ["size"]
                return key
            }(),
            KeySchema(
                name: "theme", type: .string, swiftType: "App.Theme", defaultValue: .string("dark \"night\"\n\u{0}é😀"),
                allowedValues: .choices([.string("light"), .string("dark"), .string("\u{1F}tab\t")])),
            KeySchema(name: "big", type: .integer, swiftType: "Swift.UInt64", defaultValue: .unsignedInteger(.max)),
            KeySchema(name: "small", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(.min)),
            KeySchema(
                name: "ratio", type: .real, swiftType: "Swift.Double", defaultValue: .real(-0.1),
                allowedValues: .range(lowerBound: .real(-.infinity), upperBound: .real(1e300))),
            KeySchema(name: "zero", type: .real, swiftType: "Swift.Double", defaultValue: .real(-0.0)),
            KeySchema(
                name: "tiny", type: .real, swiftType: "Swift.Double", defaultValue: .real(2.2250738585072014e-308)),
            KeySchema(name: "flag", type: .boolean, swiftType: "Swift.Bool", defaultValue: .boolean(true)),
            KeySchema(
                name: "when", type: .date, swiftType: "Foundation.Date",
                defaultValue: .date(Date(timeIntervalSince1970: 1_715_000_000.25))),
            KeySchema(
                name: "blob", type: .data, swiftType: "Foundation.Data", defaultValue: .data(Data([0, 1, 2, 255]))),
            KeySchema(
                name: "list", type: .array, swiftType: "[Swift.Int]",
                defaultValue: .array([.integer(1), .array([]), .dictionary([:]), .string("")])),
            KeySchema(
                name: "map", type: .dictionary, swiftType: "[Swift.String: Any]",
                defaultValue: .dictionary(["width": .integer(800), "é": .boolean(false), "": .data(Data())])),
            KeySchema(name: "computed", type: nil, swiftType: "Any?", defaultValue: nil, isDefaultDynamic: true),
            KeySchema(name: "päth/ with \\ \"quotes\"", type: .string, swiftType: "Swift.String", defaultValue: nil),
        ])

    static func data(_ text: String) -> Data { Data(text.utf8) }

    /// What a reader makes of a document: the schema (as its JSON), or the error's description.
    enum Verdict: Equatable {
        case schema(Data)
        case refused(String)
    }

    /// What `JSONDecoder` makes of `data`.
    static func reference(_ data: Data) -> Verdict {
        do {
            return .schema(try JSONDecoder().decode(DomainSchema.self, from: data).encoded())
        } catch {
            return .refused("\(error)")
        }
    }

    /// What `decode(from:)` makes of `data`.
    static func decoded(_ data: Data) -> Verdict {
        do {
            return .schema(try DomainSchema.decode(from: data).encoded())
        } catch {
            return .refused("\(error)")
        }
    }

    /// The rule for one document: the quick reader accepts only what `JSONDecoder` accepts, reads
    /// it alike, and `decode(from:)` answers exactly as `JSONDecoder`.
    static func expectOneRule(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        let reference = reference(data)
        if let quick = DomainSchema.quicklyRead(data) {
            #expect(
                (try? quick.encoded()).map(Verdict.schema) == reference,
                "the quick reader accepted \(String(decoding: data.prefix(300), as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
        #expect(decoded(data) == reference, sourceLocation: sourceLocation)
    }

    @Test("what the writer writes is read by the quick reader, as JSONDecoder reads it")
    func writerOutputIsReadQuickly() throws {
        var nonFinite = Self.richSchema
        nonFinite.keys.append(
            KeySchema(
                name: "odd", type: .real, swiftType: "Swift.Double", defaultValue: .real(.nan),
                allowedValues: .choices([.real(.infinity), .real(-.infinity), .real(.nan)])))
        for schema in [Self.richSchema, nonFinite, DomainSchema(domain: "empty", keys: [])] {
            let data = try schema.encoded()
            let quick = try #require(DomainSchema.quicklyRead(data))
            #expect(try quick.encoded() == data)
            #expect(Self.reference(data) == .schema(data))
        }
        #expect(DomainSchema.quicklyRead(try Self.richSchema.encoded()) == Self.richSchema)
        // Compact JSON, as another writer may make it, is read quickly too.
        let encoder = JSONEncoder()
        let compact = try encoder.encode(Self.richSchema)
        #expect(DomainSchema.quicklyRead(compact) == Self.richSchema)
    }

    @Test("documents of every wrong kind: the quick reader declines them and JSONDecoder's verdict stands")
    func hostileDocumentsFollowJSONDecoder() {
        let key = #""name":"k","swiftType":"Swift.Int","isDefaultDynamic":false,"iCloud":false"#
        func schema(keys: String, version: String = "0", domain: String = #""d""#) -> String {
            #"{"serializationVersion":\#(version),"domain":\#(domain),"keys":[\#(keys)]}"#
        }
        func keyWith(_ extra: String) -> String { schema(keys: "{\(key),\(extra)}") }
        var corpus: [String] = [
            schema(keys: "{\(key)}"),
            "", " ", "null", "[]", "\"x\"", "{}", "{", "}", "{\"keys\":[]}",
            // Versions: newer, negative, spelled as other numbers, not a number, out of range.
            schema(keys: "", version: "1"), schema(keys: "", version: "-1"), schema(keys: "", version: "0.0"),
            schema(keys: "", version: "0e0"), schema(keys: "", version: "-0"), schema(keys: "", version: "\"0\""),
            schema(keys: "", version: "null"), schema(keys: "", version: "18446744073709551616"),
            schema(keys: "", version: "9223372036854775808"), schema(keys: "", version: "1e400"),
            schema(keys: "", domain: "1"), schema(keys: "", domain: "null"),
            #"{"domain":"d","keys":[]}"#, #"{"serializationVersion":0,"keys":[]}"#,
            #"{"serializationVersion":0,"domain":"d"}"#, #"{"serializationVersion":0,"domain":"d","keys":{}}"#,
            // Keys' fields: missing, null, of the wrong type, unknown.
            schema(keys: #"{"swiftType":"S","isDefaultDynamic":false,"iCloud":false}"#),
            schema(keys: #"{"name":"k","isDefaultDynamic":false,"iCloud":false}"#),
            schema(keys: #"{"name":"k","swiftType":"S","iCloud":false}"#),
            schema(keys: #"{"name":"k","swiftType":"S","isDefaultDynamic":false}"#),
            schema(keys: #"{"name":1,"swiftType":"S","isDefaultDynamic":false,"iCloud":false}"#),
            schema(keys: #"{"name":null,"swiftType":"S","isDefaultDynamic":false,"iCloud":false}"#),
            schema(keys: #"{"name":"k","swiftType":"S","isDefaultDynamic":0,"iCloud":false}"#),
            schema(keys: #"{"name":"k","swiftType":"S","isDefaultDynamic":false,"iCloud":"no"}"#),
            schema(keys: "1"), schema(keys: "null"), schema(keys: "[]"),
            keyWith(#""type":"int""#), keyWith(#""type":null"#), keyWith(#""type":1"#), keyWith(#""type":"float""#),
            keyWith(#""description":null"#), keyWith(#""description":5"#),
            keyWith(#""description":"\u00e9\ud83d\ude00""#),
            keyWith(#""formerNames":null"#), keyWith(#""formerNames":[]"#), keyWith(#""formerNames":["a","a"]"#),
            keyWith(#""formerNames":"a""#), keyWith(#""formerNames":[1]"#), keyWith(#""formerNames":[null]"#),
            keyWith(#""formerNames":{}"#),
            keyWith(#""formerNamesConvertedByProgram":null"#), keyWith(#""formerNamesConvertedByProgram":["a"]"#),
            keyWith(#""formerNamesConvertedByProgram":"a""#), keyWith(#""formerNamesConvertedByProgram":[1]"#),
            keyWith(#""defaultValue":null"#), keyWith(#""allowedValues":null"#), keyWith(#""unknown":[1e400,{"a":-}]"#),
            keyWith(#""unknown":[1e400,{"a":null}]"#), keyWith(#""unknown":"\ud800""#),
            // Allowed values: empty, both, a null member, bad bounds.
            keyWith(#""allowedValues":{}"#), keyWith(#""allowedValues":[]"#),
            keyWith(#""allowedValues":{"range":null,"choices":[{"integer":1}]}"#),
            keyWith(#""allowedValues":{"range":{"lowerBound":{"integer":1},"upperBound":{"integer":2}},"choices":7}"#),
            keyWith(#""allowedValues":{"range":{"lowerBound":{"integer":1}}}"#),
            keyWith(#""allowedValues":{"range":{"lowerBound":{"integer":1},"upperBound":{"integer":2},"x":0}}"#),
            keyWith(#""allowedValues":{"choices":null}"#), keyWith(#""allowedValues":{"choices":[1]}"#),
            keyWith(#""allowedValues":{"other":[]}"#),
            // Values: the wrong shape, unknown types, every kind spelled well and badly.
            keyWith(#""defaultValue":{}"#), keyWith(#""defaultValue":{"integer":1,"string":"a"}"#),
            keyWith(#""defaultValue":{"int":1}"#), keyWith(#""defaultValue":[]"#), keyWith(#""defaultValue":1"#),
            keyWith(#""defaultValue":{"string":1}"#), keyWith(#""defaultValue":{"boolean":1}"#),
            keyWith(#""defaultValue":{"boolean":null}"#), keyWith(#""defaultValue":{"data":"!!"}"#),
            keyWith(#""defaultValue":{"data":"AAEC"}"#), keyWith(#""defaultValue":{"data":"AAE"}"#),
            keyWith(#""defaultValue":{"float":"nan"}"#), keyWith(#""defaultValue":{"float":"Infinity"}"#),
            keyWith(#""defaultValue":{"float":"+infinity"}"#), keyWith(#""defaultValue":{"float":true}"#),
            keyWith(#""defaultValue":{"array":{}}"#), keyWith(#""defaultValue":{"dictionary":[]}"#),
            keyWith(#""defaultValue":{"dictionary":{"a":1}}"#),
        ]
        // Numbers at every edge, as integers, floats and dates.
        for number in [
            "0", "-0", "1", "1.0", "1e2", "1E2", "100e-2", "1.5", "-1", "01", "1.", ".5", "-", "+1", "0x10",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "1e19",
            "1e400", "-1e400", "1e-400", "0e5", "0.0", "-0.0", "5e-324", "2.4703282292062328e-324",
            "2.2250738585072014e-308", "1.7976931348623157e308", "0.1", "3.141592653589793238462643383279",
            "NaN", "Infinity", "true", "null", "\"1\"",
        ] {
            for kind in ["integer", "float", "date"] {
                corpus.append(keyWith("\"defaultValue\":{\"\(kind)\":\(number)}"))
            }
        }
        // Duplicates: of a field, of the keys, of a value's type, of a dictionary's key, also
        // canonically equivalent ones (`é` twice, composed and decomposed).
        corpus += [
            schema(keys: #"{"name":"a","name":"b","swiftType":"S","isDefaultDynamic":false,"iCloud":false}"#),
            #"{"serializationVersion":0,"domain":"d","keys":[],"keys":[{\#(key)}]}"#,
            #"{"serializationVersion":0,"serializationVersion":1,"domain":"d","keys":[]}"#,
            keyWith(#""defaultValue":{"integer":1,"integer":2}"#),
            keyWith(#""defaultValue":{"dictionary":{"a":{"integer":1},"a":{"integer":2}}}"#),
            keyWith(#""defaultValue":{"dictionary":{"\u00e9":{"integer":1},"e\u0301":{"integer":2}}}"#),
            keyWith(
                #""defaultValue":{"dictionary":{"#
                    + (0..<40).map { "\"k\($0 % 30)\":{\"integer\":\($0)}" }.joined(separator: ",") + "}}"),
            keyWith(
                #""defaultValue":{"dictionary":{"#
                    + (0..<40).map { "\"k\($0)\":{\"integer\":\($0)}" }.joined(separator: ",") + "}}"),
        ]
        // Syntax: trailing commas, comments, whitespace JSON does not have, strings badly escaped.
        corpus += [
            schema(keys: "{\(key),}"), schema(keys: "{\(key)},"), schema(keys: "{\(key)}") + "x",
            schema(keys: "{\(key)}") + " \n\t\r", " \n" + schema(keys: "{\(key)}"), schema(keys: "{\(key)}") + "\u{0B}",
            schema(keys: "{\(key)} /* c */"), schema(keys: "{\(key)}") + "\u{0}", "\u{FEFF}" + schema(keys: "{\(key)}"),
            keyWith(#""description":"a\x""#), keyWith(#""description":"a\u12""#), keyWith(#""description":"\ud800""#),
            keyWith(#""description":"\udc00\ud800""#), keyWith(#""description":"\ud800\u0041""#),
            keyWith("\"description\":\"a\tb\""), keyWith("\"description\":\"a\u{7F}b\""),
            keyWith(#""description":"\u0000\/\b\f\n\r\t\\\"""#), keyWith(#""description":"unterminated"#),
            keyWith(#""description":'single'"#), keyWith(#""flag":tru"#), keyWith(#""flag":nul"#),
        ]
        // Nesting: within the quick reader's bound, beyond it, beyond JSONDecoder's.
        for depth in [10, 127, 129, 300, 600, 20_000] {
            let nested = String(repeating: #"{"array":["#, count: depth) + String(repeating: "]}", count: depth)
            corpus.append(keyWith("\"defaultValue\":\(nested)"))
            corpus.append(
                keyWith("\"unknown\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth)))
        }
        for text in corpus {
            Self.expectOneRule(Self.data(text))
        }
    }

    @Test("bytes that are not UTF-8, and other encodings: the quick reader declines, JSONDecoder decides")
    func encodings() throws {
        let valid = try DomainSchema(
            domain: "d", keys: [KeySchema(name: "é", type: .string, swiftType: "S", defaultValue: nil)]
        )
        .encoded()
        let text = String(decoding: valid, as: UTF8.self)
        var documents: [Data] = [valid, Data([0xEF, 0xBB, 0xBF]) + valid]
        documents.append(Data(text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
        documents.append(Data([0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
        documents.append(Data([0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }))
        // Invalid UTF-8 in place of `é`: a lone byte, an overlong form, an encoded surrogate, a
        // truncated sequence, a code point past U+10FFFF.
        let eAcute = try #require(valid.firstRange(of: Data("é".utf8)))
        for bad: [UInt8] in [
            [0xFF], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0x80],
        ] {
            var document = valid
            document.replaceSubrange(eAcute, with: bad)
            documents.append(document)
        }
        for document in documents {
            Self.expectOneRule(document)
        }
        #expect(DomainSchema.quicklyRead(valid) != nil)
    }

    @Test("every prefix and many corruptions of a schema: never a trap, always JSONDecoder's verdict")
    func truncationsAndCorruptions() throws {
        let valid = try DomainSchema(domain: "d", keys: Array(Self.richSchema.keys.prefix(5))).encoded()
        let compact = try JSONEncoder().encode(DomainSchema(domain: "d", keys: Array(Self.richSchema.keys.prefix(3))))
        for length in 0..<compact.count {
            Self.expectOneRule(compact.prefix(length))
        }
        // A fixed sequence of pseudo-random single-byte changes (a linear congruential generator,
        // so that any failure reproduces).
        var state: UInt64 = 0x5DEE_CE66D
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let replacements: [UInt8] = Array("{}[]\",:0-.e1\\ nutf\u{0}".utf8) + [0x80, 0xFF, 0xC3]
        for _ in 0..<600 {
            var document = valid
            let index = next() % document.count
            document[index] = replacements[next() % replacements.count]
            Self.expectOneRule(document)
        }
    }

    @Test("the environment the locations read is this process's, variable by variable")
    func processEnvironment() {
        let environment = ProcessInfo.processInfo.environment
        let read = SchemaLocations.processEnvironment
        for name in ["XDG_DATA_HOME", "XDG_DATA_DIRS", "HOME"] {
            #expect(read[name] == environment[name])
        }
        #expect(SchemaLocations.searchDirectories() == SchemaLocations.searchDirectories(environment: environment))
    }
}
