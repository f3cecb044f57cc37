import DefaultsPropertyList
import Foundation
import Testing

/// The reader makes the outermost dictionary at the size it counts ahead; whatever the bytes make
/// that count (nested dictionaries, CDATA sections and comments holding tags), the values read
/// are the document's.
@Suite("XMLReader outermost dictionary")
struct XMLReaderCapacityTests {
    private func document(_ body: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            \(body)
            </plist>
            """.utf8)
    }

    @Test func tagsInsideTextAndNestedDictionariesAreNotEntries() throws {
        let data = document(
            """
            <dict>
                <!-- <key>commented</key><string>x</string></dict><dict> -->
                <key>cdata</key><string><![CDATA[</dict><key>fake</key><dict><key>more</key>]]></string>
                <key>nested</key><dict><key>inner</key><dict><key>deep</key><true/></dict><key>b</key><dict/></dict>
                <key>empty</key><dict/>
                <key>escaped</key><string>&lt;key&gt;not a key&lt;/key&gt;</string>
                <key>last</key><integer>3</integer>
            </dict>
            """)
        let decoded = try #require(try PropertyList.decode(data) as? [String: Any])
        #expect(decoded.keys.sorted() == ["cdata", "empty", "escaped", "last", "nested"])
        #expect(decoded["cdata"] as? String == "</dict><key>fake</key><dict><key>more</key>")
        #expect(decoded["escaped"] as? String == "<key>not a key</key>")
        let nested = try #require(decoded["nested"] as? [String: Any])
        #expect((nested["inner"] as? [String: Any])?["deep"] as? Bool == true)
        #expect(decoded["last"] as? Int == 3)
    }

    @Test func aLargeDictionaryReadsBackWhole() throws {
        var values: [String: Any] = [:]
        for index in 0..<5_000 {
            values["key\(index)"] = index % 3 == 0 ? ["nested\(index)": index] as [String: Any] : index
        }
        let decoded = try #require(try PropertyList.decode(PropertyList.encodeXML(values)) as? [String: Any])
        #expect(decoded.count == 5_000)
        #expect(decoded["key4999"] as? Int == 4_999)
        #expect((decoded["key3"] as? [String: Any])?["nested3"] as? Int == 3)
    }

    /// Bad documents are still refused, however the count ahead went.
    @Test func malformedDictionariesAreStillRefused() {
        for body in [
            "<dict><key>a</key>",  // no end
            "<dict><key>a</key><string>x</string><![CDATA[",  // CDATA never closed
            "<dict><key>a</key><!-- never closed",
            "<dict><key>a</key><key>b</key><true/></dict>",  // a key without a value
            "<dict><key>a</key><true/></dict></dict>",
        ] {
            #expect(throws: PropertyListError.self, "\(body)") { try PropertyList.decode(document(body)) }
        }
    }
}
