import DefaultsPropertyList
import Foundation
import Testing

@Suite("What the writer accepts, and what it refuses")
struct EncoderInputTests {
    @Test func foundationNumbers() throws {
        let value: [String: Any] = [
            "bool": NSNumber(value: true), "false": NSNumber(value: false), "int": NSNumber(value: 5),
            "int8": NSNumber(value: Int8(1)), "uint8": NSNumber(value: UInt8(1)), "double": NSNumber(value: 1.5),
            "float": NSNumber(value: Float(0.5)), "big": NSNumber(value: UInt64.max), "min": NSNumber(value: Int64.min),
        ]
        let normalized = try #require(try PropertyList.normalize(value) as? [String: Any])
        #expect(type(of: normalized["bool"] ?? 0) == Bool.self)
        #expect(normalized["bool"] as? Bool == true)
        #expect(type(of: normalized["false"] ?? 0) == Bool.self)
        #expect(normalized["int"] as? Int == 5)
        #expect(type(of: normalized["int8"] ?? 0) == Int.self)
        #expect(type(of: normalized["uint8"] ?? 0) == Int.self)
        #expect(normalized["double"] as? Double == 1.5)
        #expect(normalized["float"] as? Double == 0.5)
        #expect(normalized["big"] as? UInt64 == UInt64.max)
        #expect(normalized["min"] as? Int == Int.min)
        let xml = try xmlString(value)
        #expect(xml.contains("<key>bool</key>\n\t<true/>"))
        #expect(xml.contains("<key>int8</key>\n\t<integer>1</integer>"))
    }

    @Test func swiftNumericTypes() throws {
        let value: [Any] = [
            Int8(-8), Int16(-16), Int32(-32), Int64(-64), UInt(1), UInt8(8), UInt16(16), UInt32(32), UInt64(64),
            Float(0.25),
        ]
        let decoded = try PropertyList.decode(try PropertyList.encodeXML(value))
        #expect(PropertyList.isEqual(decoded, [-8, -16, -32, -64, 1, 8, 16, 32, 64, 0.25] as [Any]))
    }

    @Test func swiftIntOneIsNotTrue() throws {
        #expect(try xmlString(1).contains("<integer>1</integer>"))
        #expect(try xmlString(true).contains("<true/>"))
        #expect(!PropertyList.isEqual(1, true))
        #expect(!PropertyList.isEqual(1, 1.0))
    }

    @Test func foundationObjectsAndBridging() throws {
        let value: Any = NSDictionary(dictionary: [
            "s": NSString(string: "text"), "a": NSArray(array: [1, "x"]), "d": NSData(data: Data([1])),
            "t": NSDate(timeIntervalSinceReferenceDate: 0),
        ])
        let expected: [String: Any] = [
            "s": "text", "a": [1, "x"], "d": Data([1]), "t": Date(timeIntervalSinceReferenceDate: 0),
        ]
        #expect(PropertyList.isEqual(try PropertyList.decode(try PropertyList.encodeXML(value)), expected))
        #expect(PropertyList.isEqual(try PropertyList.normalize(value), expected))
    }

    @Test func optionalsAndAnyHashableAsFoundationOnLinuxReturnsThem() throws {
        let inner: [AnyHashable: Any?] = [
            "x": Optional<Any>.some(1), "y": Optional<Any>.some([Optional<Any>.some("z")] as Any),
        ]
        let value: [AnyHashable: Any?] = ["nested": Optional<Any>.some(inner as Any), "flag": Optional<Any>.some(true)]
        let expected: [String: Any] = ["nested": ["x": 1, "y": ["z"]], "flag": true]
        #expect(PropertyList.isEqual(try PropertyList.decode(try PropertyList.encodeXML(value)), expected))
        let normalized = try PropertyList.normalize(value)
        #expect(type(of: normalized) == [String: Any].self)
        #expect(PropertyList.isEqual(normalized, expected))
        let doublyWrapped: Any = Optional<Any>.some(Optional<Any>.some(3) as Any) as Any
        #expect(try xmlString(doublyWrapped).contains("<integer>3</integer>"))
    }

    @Test func valuesThatUserDefaultsHandsBack() throws {
        let name = "DefaultsPropertyListTests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: name))
        defer { defaults.removePersistentDomain(forName: name) }
        defaults.set(["a": ["b": [1, true, "s"]]], forKey: "k")
        let stored = try #require(defaults.object(forKey: "k"))
        let expected: [String: Any] = ["a": ["b": [1, true, "s"]]]
        #expect(PropertyList.isEqual(try PropertyList.normalize(stored), expected))
        #expect(PropertyList.isEqual(try PropertyList.decode(try PropertyList.encodeXML(stored)), expected))
    }

    @Test func unsupportedValuesNameTheTypeAndKeyPath() {
        struct Custom {}
        let cases: [(Any, String, String)] = [
            (["window": ["frames": [1, 2, URL(fileURLWithPath: "/tmp")]]], "[\"window\"][\"frames\"][2]", "URL"),
            (["a": Optional<Any>.none as Any], "[\"a\"]", "nil"),
            ([Custom()], "[0]", "Custom"),
            ([1: "one"] as [Int: String], "", "key 1"),
            (["deep": [["x": NSNull()]]], "[\"deep\"][0][\"x\"]", "NSNull"),
        ]
        for (value, path, typeName) in cases {
            for normalizing in [false, true] {
                do throws(PropertyListError) {
                    if normalizing {
                        _ = try PropertyList.normalize(value)
                    } else {
                        _ = try PropertyList.encodeXML(value)
                    }
                    Issue.record("expected an error for \(value)")
                } catch {
                    #expect(error.kind == .unsupportedValue)
                    #expect(error.keyPath == path, "\(error)")
                    #expect(error.message.contains(typeName), "\(error)")
                }
            }
        }
    }

    @Test func openStepDescribesUnsupportedValuesWithoutFailing() {
        let text = PropertyList.openStepDescription([
            "url": URL(fileURLWithPath: "/tmp"), "nil": Optional<Any>.none as Any,
        ])
        #expect(text.contains("url = "))
        #expect(text.contains("nil = "))
    }
}
