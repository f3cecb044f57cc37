import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

@Suite("Round trips through our XML writer and reader")
struct RoundTripTests {
    private func roundTrip(_ value: Any, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let decoded = try PropertyList.decode(try PropertyList.encodeXML(value))
        #expect(PropertyList.isEqual(decoded, value), "\(decoded) != \(value)", sourceLocation: sourceLocation)
    }

    @Test func everyScalarTypeAtTheTopLevel() throws {
        try roundTrip("hello")
        try roundTrip("")
        try roundTrip(42)
        try roundTrip(-7)
        try roundTrip(UInt64.max)
        try roundTrip(0.1)
        try roundTrip(-2.5)
        try roundTrip(true)
        try roundTrip(false)
        try roundTrip(Date(timeIntervalSinceReferenceDate: 725_803_200))
        try roundTrip(Data([0, 1, 2, 255]))
        try roundTrip(Data())
        try roundTrip([Any]())
        try roundTrip([String: Any]())
    }

    @Test func decodedTypesAreTheValueModel() throws {
        let value: [String: Any] = [
            "s": "x", "i": 1, "u": UInt64.max, "d": 1.5, "b": true, "t": Date(timeIntervalSinceReferenceDate: 0),
            "data": Data([1]), "a": [1], "dict": ["k": "v"],
        ]
        let decoded = try #require(try PropertyList.decode(try PropertyList.encodeXML(value)) as? [String: Any])
        #expect(decoded["s"] is String)
        #expect(type(of: decoded["i"] ?? 0) == Int.self)
        #expect(type(of: decoded["u"] ?? 0) == UInt64.self)
        #expect(type(of: decoded["d"] ?? 0) == Double.self)
        #expect(type(of: decoded["b"] ?? 0) == Bool.self)
        #expect(decoded["t"] is Date)
        #expect(decoded["data"] is Data)
        #expect(type(of: decoded["a"] ?? 0) == [Any].self)
        #expect(type(of: decoded["dict"] ?? 0) == [String: Any].self)
    }

    @Test func nestedContainers() throws {
        let value: [String: Any] = [
            "list": [1, "two", 3.5, [true, ["deep": [Data([9])]]], [String: Any]()],
            "map": ["inner": ["x": -1, "y": [Any]()]],
        ]
        try roundTrip(value)
        try roundTrip([[[[["bottom"]]]]])
    }

    @Test(arguments: [Int.min, Int.min + 1, -1, 0, 1, Int(Int32.max), Int.max])
    func integerEdges(_ value: Int) throws {
        try roundTrip(value)
        #expect(try PropertyList.decode(Data("<integer>\(value)</integer>".utf8)) as? Int == value)
    }

    @Test func unsignedAboveIntMax() throws {
        for value in [UInt64(Int.max) + 1, UInt64.max - 1, UInt64.max] {
            try roundTrip(value)
            let decoded = try PropertyList.decode(Data("<integer>\(value)</integer>".utf8))
            #expect(decoded as? UInt64 == value)
        }
    }

    @Test func integerTextForms() throws {
        #expect(try PropertyList.decode(Data("<integer>+5</integer>".utf8)) as? Int == 5)
        #expect(try PropertyList.decode(Data("<integer>0x1F</integer>".utf8)) as? Int == 31)
        #expect(try PropertyList.decode(Data("<integer>-0</integer>".utf8)) as? Int == 0)
        #expect(try PropertyList.decode(Data("<integer>007</integer>".utf8)) as? Int == 7)
    }

    @Test func integerOverflowIsAnError() {
        expectDecodeError("<integer>18446744073709551616</integer>", kind: .outOfRange)
        expectDecodeError("<integer>-9223372036854775809</integer>", kind: .outOfRange)
        expectDecodeError("<integer>99999999999999999999999999999</integer>", kind: .outOfRange)
        expectDecodeError("<integer>12a</integer>", kind: .syntax)
        expectDecodeError("<integer>1.5</integer>", kind: .syntax)
        expectDecodeError("<integer></integer>", kind: .syntax)
        expectDecodeError("<integer/>", kind: .syntax)
    }

    @Test func realsAreShortestAndExact() throws {
        #expect(try xmlString(0.1).contains("<real>0.1</real>"))
        #expect(try xmlString(1.0).contains("<real>1</real>"))
        #expect(try xmlString(0.0).contains("<real>0.0</real>"))
        #expect(try xmlString(-0.0).contains("<real>-0.0</real>"))
        #expect(try xmlString(-2.5).contains("<real>-2.5</real>"))
        #expect(try xmlString(Double.nan).contains("<real>nan</real>"))
        #expect(try xmlString(Double.infinity).contains("<real>+infinity</real>"))
        #expect(try xmlString(-Double.infinity).contains("<real>-infinity</real>"))
        for value in [
            0.1, 1.0 / 3, 1e300, Double.leastNonzeroMagnitude, -0.0, Double.greatestFiniteMagnitude, 123_456_789.125,
            1e15, 1e16,
        ] {
            let decoded = try PropertyList.decode(try PropertyList.encodeXML(value)) as? Double
            #expect(decoded?.bitPattern == value.bitPattern, "\(value)")
        }
    }

    @Test func realWordsAsFoundationWritesThem() throws {
        for (text, expected) in [
            ("nan", Double.nan), ("inf", .infinity), ("+inf", .infinity), ("-inf", -.infinity),
            ("+infinity", .infinity), ("-infinity", -.infinity), ("Infinity", .infinity), ("1.", 1), (".5", 0.5),
        ] {
            let decoded = try #require(try PropertyList.decode(Data("<real>\(text)</real>".utf8)) as? Double)
            #expect(decoded == expected || (decoded.isNaN && expected.isNaN), "\(text)")
        }
        expectDecodeError("<real>0x10</real>", kind: .syntax)
        expectDecodeError("<real>abc</real>", kind: .syntax)
    }

    @Test func stringsWithSpecialCharacters() throws {
        for string in [
            "emoji 😀👩‍👩‍👧 flags 🇫🇷", "<&>", "a]]>b", "\u{0}\u{1}\u{8}\u{B}\u{1F}\u{7F}", "tab\t\nnew\r\nline",
            "&amp; literally", "\"quotes\" and 'apostrophes'", String(repeating: "long ", count: 10_000),
        ] {
            try roundTrip(string)
            try roundTrip([string: string])
        }
        #expect(try xmlString("<&>").contains("<string>&lt;&amp;&gt;</string>"))
        #expect(try xmlString(["<k>": 1]).contains("<key>&lt;k&gt;</key>"))
    }

    @Test func entitiesAndCDATA() throws {
        let text = plistDocument(
            "<string>&lt;&gt;&amp;&quot;&apos;&#65;&#x1F600;<![CDATA[<raw & text>]]><!-- comment -->end</string>"
        )
        #expect(try PropertyList.decode(Data(text.utf8)) as? String == "<>&\"'A😀<raw & text>end")
        expectDecodeError("<string>&bogus;</string>", kind: .syntax)
        expectDecodeError("<string>&#xD800;</string>", kind: .syntax)
        expectDecodeError("<string>a & b</string>", kind: .syntax)
    }

    @Test func emptyElements() throws {
        let text = plistDocument("<array><string/><dict/><array/><data/><true></true><key/></array>")
        expectDecodeError(Data(text.utf8))
        let valid = plistDocument("<array><string/><dict/><array/><data/><true></true><false/></array>")
        let array = try #require(try PropertyList.decode(Data(valid.utf8)) as? [Any])
        #expect(array.count == 6)
        #expect(array[0] as? String == "")
        #expect((array[1] as? [String: Any])?.isEmpty == true)
        #expect((array[2] as? [Any])?.isEmpty == true)
        #expect(array[3] as? Data == Data())
        #expect(array[4] as? Bool == true)
        #expect(array[5] as? Bool == false)
    }

    @Test func duplicateKeysLastWins() throws {
        let text = plistDocument("<dict><key>a</key><integer>1</integer><key>a</key><integer>2</integer></dict>")
        let dictionary = try #require(try PropertyList.decode(Data(text.utf8)) as? [String: Any])
        #expect(dictionary["a"] as? Int == 2)
    }

    @Test func datesAreUTCToTheSecond() throws {
        #expect(try xmlString(Date(timeIntervalSinceReferenceDate: 0)).contains("<date>2001-01-01T00:00:00Z</date>"))
        #expect(
            try xmlString(Date(timeIntervalSinceReferenceDate: 725_803_200)).contains(
                "<date>2024-01-01T12:00:00Z</date>"))
        // Rounded down, as Foundation does: -0.5 s is the previous second.
        #expect(try xmlString(Date(timeIntervalSinceReferenceDate: -0.5)).contains("<date>2000-12-31T23:59:59Z</date>"))
        #expect(try xmlString(Date(timeIntervalSinceReferenceDate: 0.7)).contains("<date>2001-01-01T00:00:00Z</date>"))
        let date = try PropertyList.decode(Data("<date>2024-02-29T23:59:59Z</date>".utf8)) as? Date
        #expect(date?.timeIntervalSince1970 == 1_709_251_199)
        let fractional = try PropertyList.decode(Data("<date>2001-01-01T00:00:01.25Z</date>".utf8)) as? Date
        #expect(fractional?.timeIntervalSinceReferenceDate == 1.25)
        expectDecodeError("<date>2023-02-29T00:00:00Z</date>", kind: .syntax)
        expectDecodeError("<date>2024-01-01 12:00:00</date>", kind: .syntax)
        expectDecodeError("<date>yesterday</date>", kind: .syntax)
    }

    @Test func farDatesRoundTrip() throws {
        for interval in [-1e12, 1e12, -63_114_076_800.0, 3e10] {
            try roundTrip(Date(timeIntervalSinceReferenceDate: interval))
        }
    }

    @Test func absurdDatesStillWriteReadableXML() throws {
        // Found by the fuzzer: a binary plist may hold any Double as a date.
        for interval in [1e300, -1e300, Double.nan, Double.infinity, 1e15, -1e15] {
            let xml = try PropertyList.encodeXML(Date(timeIntervalSinceReferenceDate: interval))
            #expect(try PropertyList.decode(xml) is Date, "\(interval)")
        }
    }

    @Test func dataBase64WithWhitespace() throws {
        let text = plistDocument("<data>\n\tAAEC\n\tAw==\n</data>")
        #expect(try PropertyList.decode(Data(text.utf8)) as? Data == Data([0, 1, 2, 3]))
        for count in [0, 1, 2, 3, 50, 51, 52, 57, 100, 1000] {
            try roundTrip(Data((0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) }))
        }
        expectDecodeError("<data>AA*A</data>", kind: .syntax)
        expectDecodeError("<data>A</data>", kind: .syntax)
        expectDecodeError("<data>AA==AA</data>", kind: .syntax)
    }

    @Test func topLevelFragmentsAndWhitespace() throws {
        #expect(try PropertyList.decode(Data("  <integer>5</integer>\n".utf8)) as? Int == 5)
        #expect(try PropertyList.decode(Data("\u{FEFF}<string>bom</string>".utf8)) as? String == "bom")
        let withComments =
            "<?xml version=\"1.0\"?><!-- a --><plist version=\"1.0\"><!-- b --><true/><!-- c --></plist><!-- d -->"
        #expect(try PropertyList.decode(Data(withComments.utf8)) as? Bool == true)
        #expect(PropertyList.format(of: Data("<dict/>".utf8)) == .xml)
        #expect(PropertyList.format(of: Data("(1)".utf8)) == .openStep)
        #expect(PropertyList.format(of: Data("<0102>".utf8)) == .openStep)
    }

    @Test func randomizedRoundTrips() throws {
        var generator = ValueGenerator(random: SeededGenerator(seed: 0x5EED))
        for _ in 0..<300 {
            let value = generator.value()
            let xml = try PropertyList.encodeXML(value)
            let decoded = try PropertyList.decode(xml)
            #expect(PropertyList.isEqual(decoded, value))
            // Writing is deterministic: the decoded value writes the same bytes.
            #expect(try PropertyList.encodeXML(decoded) == xml)
        }
    }
}
