import DefaultsPropertyList
import Foundation
import Testing

/// The reader recognizes the usual tags (`<key>`, `</string>`, `<true/>`) by comparing words when
/// at least 16 bytes follow them, and byte by byte otherwise: both ways read every spelling the
/// same, and refuse the same near-misses.
@Suite("XMLReader tag spellings")
struct XMLReaderTagTests {
    /// A spelling of a value and what it reads as, named on one line in the test report.
    struct Spelling: Sendable, CustomTestStringConvertible {
        var value: String
        var expected: PropertyListValue

        init(_ value: String, _ expected: PropertyListValue) {
            (self.value, self.expected) = (value, expected)
        }

        var testDescription: String { value.debugDescription }
    }

    /// `value` as the only entry of a dictionary, once with a long comment after it (so that every
    /// tag has room after it) and once bare (so that the last tags are read near the end).
    private func documents(_ value: String) -> [Data] {
        let body = "<plist version=\"1.0\"><dict><key>k</key>\(value)</dict></plist>"
        return [Data((body + "<!-- \(String(repeating: "padding ", count: 8)) -->").utf8), Data(body.utf8)]
    }

    @Test(
        arguments: [Spelling]([
            Spelling("<string>x</string>", .string("x")),
            Spelling("<string >x</string >", .string("x")),
            Spelling("<string id=\"a\">x</string>", .string("x")),
            Spelling("<string/>", .string("")),
            Spelling("<string></string>", .string("")),
            Spelling("<integer>42</integer>", .integer(42)),
            Spelling("<integer >42</integer\n>", .integer(42)),
            Spelling("<real>0.5</real>", .real(0.5)),
            Spelling("<true/>", .boolean(true)),
            Spelling("<true />", .boolean(true)),
            Spelling("<true></true>", .boolean(true)),
            Spelling("<false/>", .boolean(false)),
            Spelling("<date>2001-01-01T00:00:00Z</date>", .date(Date(timeIntervalSinceReferenceDate: 0))),
            Spelling("<data>AQI=</data>", .data(Data([1, 2]))),
            Spelling("<data/>", .data(Data())),
            Spelling("<array><integer>1</integer></array>", .array([.integer(1)])),
            Spelling("<array/>", .array([])),
            Spelling("<dict><key>a</key><true/></dict>", .dictionary(["a": .boolean(true)])),
            Spelling("<dict/>", .dictionary([:])),
        ]))
    func spellingsReadTheSameEverywhere(_ spelling: Spelling) throws {
        let (value, expected) = (spelling.value, spelling.expected)
        for document in documents(value) {
            #expect(try PropertyList.decodeValue(document) == .dictionary(["k": expected]), "\(value)")
        }
    }

    @Test(arguments: [
        "<keys>x</keys>",
        "<strin>x</strin>",
        "<stringy>x</stringy>",
        "<string>x</strings>",
        "<string>x</str>",
        "<integer/>",
        "<integer>1</integers>",
        "<reals>1</reals>",
        "<trues/>",
        "<true/ >",
        "<dates>2001-01-01T00:00:00Z</dates>",
        "<datum>AQI=</datum>",
        "<arrays/>",
        "<dictionary/>",
    ])
    func nearMissesAreRefusedEverywhere(value: String) {
        for document in documents(value) {
            #expect(throws: PropertyListError.self, "\(value)") { try PropertyList.decodeValue(document) }
        }
    }
}
