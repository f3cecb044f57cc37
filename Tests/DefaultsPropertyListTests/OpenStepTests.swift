import DefaultsPropertyList
import Foundation
import Testing

@Suite("Old-style text: defaults read printing and defaults write parsing")
struct OpenStepTests {
    @Test func printsLikeDefaultsRead() {
        let value: [String: Any] = [
            "autohide": true,
            "autohide-delay": 0,
            "orientation": "left",
            "tilesize": 48,
            "volume": 0.5,
            "offset": -3,
            "name": "Café \"quoted\"",
            "path": "/Users/me",
            "empty": "",
            "when": Date(timeIntervalSinceReferenceDate: 725_803_200),
            "token": Data([1, 2, 3]),
            "persistent-apps": [
                ["GUID": 1234, "tile-data": ["bundle-identifier": "com.apple.Safari"]] as [String: Any],
                [String: Any](),
            ],
            "sizes": [1, 2],
            "nothing": [Any](),
        ]
        let expected = """
            {
                GUID = 1;
                autohide = 1;
                "autohide-delay" = 0;
                empty = "";
                name = "Caf\\U00e9 \\"quoted\\"";
                nothing =     (
                );
                offset = "-3";
                orientation = left;
                path = "/Users/me";
                "persistent-apps" =     (
                            {
                        GUID = 1234;
                        "tile-data" =             {
                            "bundle-identifier" = "com.apple.Safari";
                        };
                    },
                            {
                    }
                );
                sizes =     (
                    1,
                    2
                );
                tilesize = 48;
                token = {length = 3, bytes = 0x010203};
                volume = "0.5";
                when = "2024-01-01 12:00:00 +0000";
            }
            """
        var withGUID = value
        withGUID["GUID"] = 1
        #expect(PropertyList.openStepDescription(withGUID) == expected)
    }

    @Test func topLevelScalarsPrintPlain() {
        #expect(PropertyList.openStepDescription("en_US") == "en_US")
        #expect(PropertyList.openStepDescription(-5) == "-5")
        #expect(PropertyList.openStepDescription(0.25) == "0.25")
        #expect(PropertyList.openStepDescription(true) == "1")
        #expect(
            PropertyList.openStepDescription(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01 00:00:00 +0000")
        #expect(PropertyList.openStepDescription([String: Any]()) == "{\n}")
        #expect(PropertyList.openStepDescription([Any]()) == "(\n)")
    }

    @Test func longDataIsAbbreviated() {
        let data = Data(0..<100)
        #expect(
            PropertyList.openStepDescription(["d": data])
                == "{\n    d = {length = 100, bytes = 0x00010203 04050607 08090a0b 0c0d0e0f ... 5c5d5e5f 60616263 };\n}"
        )
    }

    @Test func escapesRoundTripThroughTheParser() throws {
        let strings = ["emoji 😀", "tab\there", "new\nline", "back\\slash", "\"q\"", "\u{1}", "日本", "a=b;c", ""]
        let printed = PropertyList.openStepDescription(["list": strings])
        let parsed = try #require(try PropertyList.parseText(printed) as? [String: Any])
        #expect(parsed["list"] as? [String] == strings)
    }

    @Test func parsesDefaultsWriteForms() throws {
        #expect(try PropertyList.parseText("(1, 2)") as? [String] == ["1", "2"])
        #expect(try PropertyList.parseText("( a , \"b c\" , )") as? [String] == ["a", "b c"])
        let dictionary = try #require(
            try PropertyList.parseText("{ a = 1; b = (x, y); c = { d = \"e\"; }; }") as? [String: Any])
        #expect(dictionary["a"] as? String == "1")
        #expect(dictionary["b"] as? [String] == ["x", "y"])
        #expect((dictionary["c"] as? [String: Any])?["d"] as? String == "e")
        #expect(
            try PropertyList.parseText(#""quote \" backslash \\ newline \n e \U00e9 smile \Ud83d\Ude00""#) as? String
                == "quote \" backslash \\ newline \n e é smile 😀")
        #expect(try PropertyList.parseText("<0fa1 22>") as? Data == Data([0x0F, 0xA1, 0x22]))
        #expect(try PropertyList.parseText("<>") as? Data == Data())
        #expect(try PropertyList.parseText("com.apple.dock") as? String == "com.apple.dock")
        #expect(try PropertyList.parseText("  /usr/local/bin  ") as? String == "/usr/local/bin")
        #expect(try PropertyList.parseText("'single'") as? String == "single")
        #expect(try PropertyList.parseText("\"\\101\\102\"") as? String == "AB")
        #expect(try PropertyList.parseText("{ a = b }") as? [String: String] == ["a": "b"])
        #expect(try PropertyList.parseText("{}") as? [String: String] == [:])
        #expect(try PropertyList.parseText("/* c */ ( a, // line\n b )") as? [String] == ["a", "b"])
        #expect(try PropertyList.parseText("a = 1; \"b\" = \"2\";") as? [String: String] == ["a": "1", "b": "2"])
    }

    @Test func parsesXMLFragments() throws {
        #expect(try PropertyList.parseText("<integer>5</integer>") as? Int == 5)
        #expect(try PropertyList.parseText("<true/>") as? Bool == true)
        #expect(
            try PropertyList.parseText("<array><integer>1</integer><string>x</string></array>") as? [AnyHashable] == [
                1, "x",
            ])
        let dictionary = try PropertyList.parseText("<dict><key>k</key><real>1.5</real></dict>") as? [String: Any]
        #expect(dictionary?["k"] as? Double == 1.5)
        #expect(try PropertyList.parseText(plistDocument("<string>full</string>")) as? String == "full")
        // Hex data that happens to start with letters is still data.
        #expect(try PropertyList.parseText("<dead beef>") as? Data == Data([0xDE, 0xAD, 0xBE, 0xEF]))
    }

    @Test func parseErrors() {
        for text in [
            "", "   ", "(1, 2", "{ a = 1", "{ a 1; }", "(a b)", "\"open", "<0g>", "<012>", "{ (a) = b; }", "a b", "@",
            "{ a = 1; } x",
        ] {
            do {
                let value = try PropertyList.parseText(text)
                Issue.record("\(text) parsed as \(value)")
            } catch {
                #expect(error.line != nil, "\(text)")
            }
        }
    }

    @Test func oldStyleDataFromDecode() throws {
        #expect(try PropertyList.decode(Data("{ key = value; }".utf8)) as? [String: String] == ["key": "value"])
        // UTF-16 .strings files, with a byte order mark.
        var utf16 = Data([0xFF, 0xFE])
        for unit in "\"k\" = \"é\";".utf16 { utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        #expect(try PropertyList.decode(utf16) as? [String: String] == ["k": "é"])
    }

    @Test func foundationAgreesOnOldStyleParsing() throws {
        let texts = [
            "(1, 2)", "{ a = 1; b = (x, y); }", "\"caf\\U00e9\"", "<0102 03>", "(a,)", "{ \"k\" = <00>; l = \"\\n\"; }",
        ]
        for text in texts {
            let ours = try PropertyList.parseText(text)
            let theirs = try foundationDecode(Data(text.utf8))
            #expect(PropertyList.isEqual(ours, theirs), "\(text)")
        }
    }

    /// A domain whose text is far larger than its file (one shared object referenced at every
    /// element) is written in pieces as it is made, never held whole, and the pieces make the
    /// same text.
    @Test func aLargeDescriptionIsWrittenInPieces() {
        let shared = PropertyListValue.dictionary(["a": .integer(1), "b": .string("two")])
        let value = PropertyListValue.dictionary([
            "list": .array(Array(repeating: shared, count: 20_000)), "name": .string("x"),
        ])
        var pieces: [Int] = []
        var text = Data()
        PropertyList.writeOpenStepDescription(value) { bytes in
            pieces.append(bytes.count)
            text.append(contentsOf: bytes)
        }
        #expect(String(decoding: text, as: UTF8.self) == PropertyList.openStepDescription(value))
        #expect(pieces.count > 10, "\(pieces.count) pieces of \(text.count) bytes")
        #expect(pieces.allSatisfy { $0 <= 65_536 + 1_024 }, "at most a piece and an element: \(pieces.max() ?? 0)")
    }
}
