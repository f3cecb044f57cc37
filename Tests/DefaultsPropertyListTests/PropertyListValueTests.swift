import DefaultsPropertyList
import Foundation
import Testing

/// The one `Sendable` value type: made from Foundation-style `Any`, back to plain objects, through
/// every codec form, with property-list equality and hashing.
@Suite("PropertyListValue")
struct PropertyListValueTests {
    /// One of each kind, nested, including the edge cases of the value model.
    static let sample: PropertyListValue = .dictionary([
        "string": .string("a < b & \"c\" é"),
        "integer": .integer(-42),
        "large": .unsignedInteger(UInt64.max),
        "real": .real(0.1),
        "flag": .boolean(true),
        "date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000)),
        "data": .data(Data([0, 1, 254, 255])),
        "list": .array([.integer(1), .string("two"), .array([.real(3.5)]), .dictionary([:])]),
        "nested": .dictionary(["inner": .dictionary(["deep": .array([])])]),
    ])

    @Test func xmlRoundTrip() throws {
        let data = try PropertyList.encodeXML(Self.sample)
        #expect(try PropertyList.decodeValue(data) == Self.sample)
        // The `Any` API reads the same document into the plain objects of the same value.
        #expect(try PropertyListValue(PropertyList.decode(data)) == Self.sample)
        // Writing the value and writing its plain objects give the same bytes.
        #expect(try PropertyList.encodeXML(Self.sample.object) == data)
    }

    @Test func binaryRoundTrip() throws {
        let data = try PropertyListSerialization.data(
            fromPropertyList: Self.sample.object, format: .binary, options: 0)
        #expect(PropertyList.format(of: data) == .binary)
        #expect(try PropertyList.decodeValue(data) == Self.sample)
    }

    /// Old-style text has only strings, arrays and dictionaries (and data, which the description
    /// prints as `defaults read` does, not as `<…>`): those survive the trip.
    @Test func openStepRoundTrip() throws {
        let value: PropertyListValue = .dictionary([
            "name": .string("hello \"world\" é"),
            "list": .array([.string("a"), .dictionary(["b": .string("c")])]),
        ])
        #expect(try PropertyList.parseTextValue(value.description) == value)
        // A number prints as text and reads back as a string, as in CoreFoundation.
        #expect(
            try PropertyList.parseTextValue(PropertyListValue.array([.integer(5)]).description)
                == .array([.string("5")]))
    }

    @Test func foundationObjectsAreClassified() throws {
        #expect(try PropertyListValue(NSNumber(value: true)) == .boolean(true))
        #expect(try PropertyListValue(NSNumber(value: false)) == .boolean(false))
        #expect(try PropertyListValue(NSNumber(value: 1)) == .integer(1))
        #expect(try PropertyListValue(NSNumber(value: Int8(1))) == .integer(1))
        #expect(try PropertyListValue(NSNumber(value: 2.5)) == .real(2.5))
        #expect(try PropertyListValue(NSNumber(value: UInt64.max)) == .unsignedInteger(UInt64.max))
        #expect(try PropertyListValue(NSString(string: "text")) == .string("text"))
        #expect(try PropertyListValue(NSData(data: Data([7]))) == .data(Data([7])))
        #expect(try PropertyListValue(NSArray(array: [1, "a"])) == .array([.integer(1), .string("a")]))
        let dictionary = NSDictionary(dictionary: ["k": NSNumber(value: true)])
        #expect(try PropertyListValue(dictionary) == .dictionary(["k": .boolean(true)]))
        let hashable: [AnyHashable: Any] = ["k": Float(1.5)]
        #expect(try PropertyListValue(hashable) == .dictionary(["k": .real(1.5)]))
        let optional: Any? = Int16(-3)
        #expect(try PropertyListValue(optional as Any) == .integer(-3))
        #expect(try PropertyListValue(UInt32.max) == .integer(Int(UInt32.max)))
    }

    @Test func objectGivesThePlainSwiftObjects() throws {
        let object = try #require(Self.sample.object as? [String: Any])
        #expect(object["string"] as? String == "a < b & \"c\" é")
        #expect(object["integer"] as? Int == -42)
        #expect(object["large"] as? UInt64 == UInt64.max)
        #expect(object["flag"] as? Bool == true)
        #expect(object["list"].map { type(of: $0) == [Any].self } == true)
        #expect(PropertyListValue.unsignedInteger(7).object as? Int == 7)
        #expect(try PropertyListValue(Self.sample.object) == Self.sample)
    }

    @Test func notANumberEqualsItselfAndHashesAlike() {
        let quiet = PropertyListValue.real(.nan)
        let signaling = PropertyListValue.real(-.signalingNaN)
        #expect(quiet == signaling)
        #expect(quiet.hashValue == signaling.hashValue)
        #expect(Set([quiet, signaling, .real(.nan)]).count == 1)
        #expect(
            PropertyListValue.date(Date(timeIntervalSinceReferenceDate: .nan))
                == .date(Date(timeIntervalSinceReferenceDate: .nan)))
        #expect(PropertyList.isEqual(Double.nan, Double.nan))
        #expect(PropertyListValue.real(0.0) == .real(-0.0))
        #expect(PropertyListValue.real(0.0).hashValue == PropertyListValue.real(-0.0).hashValue)
    }

    @Test func unsignedIntegersAboveIntMaxOnly() throws {
        let above = UInt64(Int.max) + 1
        #expect(try PropertyListValue(above) == .unsignedInteger(above))
        #expect(try PropertyListValue(UInt64(5)) == .integer(5))
        #expect(try PropertyListValue(UInt(5)) == .integer(5))
        // Made by hand below `Int.max`, it is the same value as the integer.
        #expect(PropertyListValue.unsignedInteger(5) == .integer(5))
        #expect(PropertyListValue.unsignedInteger(5).hashValue == PropertyListValue.integer(5).hashValue)
        #expect(PropertyListValue.unsignedInteger(above) != .integer(Int.min))
        let data = try PropertyList.encodeXML(PropertyListValue.unsignedInteger(above))
        #expect(String(decoding: data, as: UTF8.self).contains("<integer>9223372036854775808</integer>"))
        #expect(try PropertyList.decodeValue(data) == .unsignedInteger(above))
    }

    @Test func nestedContainersAreReachable() throws {
        #expect(Self.sample["nested"]?["inner"]?["deep"] == .array([]))
        #expect(Self.sample["list"]?[2]?[0] == .real(3.5))
        #expect(Self.sample["list"]?[9] == nil)
        #expect(Self.sample["missing"] == nil)
        #expect(PropertyListValue.string("x")["key"] == nil)
        var deep: Any = 1
        for _ in 0..<100 { deep = ["level": [deep]] }
        let value = try PropertyListValue(deep)
        #expect(try PropertyList.decodeValue(PropertyList.encodeXML(value)) == value)
    }

    @Test func unsupportedValuesAreRejectedWithTheirKeyPath() {
        let bad: [String: Any] = ["window": ["frames": [1, 2, URL(fileURLWithPath: "/tmp")]]]
        #expect {
            try PropertyListValue(bad)
        } throws: { error in
            guard let error = error as? PropertyListError else { return false }
            return error.kind == .unsupportedValue && error.keyPath == "[\"window\"][\"frames\"][2]"
                && error.message.contains("URL")
        }
        #expect(throws: PropertyListError.self) { try PropertyListValue(Optional<Int>.none as Any) }
        #expect {
            try PropertyListValue([1: "one"] as [Int: String])
        } throws: { error in
            (error as? PropertyListError)?.kind == .unsupportedValue
        }
        var tooDeep: Any = 0
        for _ in 0...PropertyList.maximumDepth { tooDeep = [tooDeep] }
        #expect {
            try PropertyListValue(tooDeep)
        } throws: { error in
            (error as? PropertyListError)?.kind == .tooDeep
        }
    }

    /// Equality is ``PropertyList/isEqual(_:_:)``'s, and equal values hash alike.
    @Test func hashableAgreesWithPropertyListEquality() {
        let values: [PropertyListValue] = [
            .integer(1), .real(1), .boolean(true), .string("1"), .integer(0), .boolean(false), .real(0),
            .real(-0.0), .real(.nan), .real(.infinity), .unsignedInteger(1), .unsignedInteger(UInt64.max),
            .date(Date(timeIntervalSinceReferenceDate: 1)), .data(Data([1])), .data(Data()), .array([]),
            .dictionary([:]), .array([.integer(1)]), .array([.real(1)]), .dictionary(["a": .integer(1)]),
            .dictionary(["a": .boolean(true)]), .dictionary(["a": .integer(1), "b": .real(.nan)]),
            .dictionary(["b": .real(.nan), "a": .unsignedInteger(1)]),
        ]
        for lhs in values {
            for rhs in values {
                #expect((lhs == rhs) == PropertyList.isEqual(lhs.object, rhs.object), "\(lhs) vs \(rhs)")
                if lhs == rhs {
                    #expect(lhs.hashValue == rhs.hashValue, "\(lhs) vs \(rhs)")
                }
            }
        }
        #expect(Set(values).count == values.count - 3)  // -0.0, unsignedInteger(1), the reordered dictionary
    }

    /// The type is `Sendable`: a value crosses into a task and back unchanged.
    @Test func crossesTasks() async {
        let value = Self.sample
        let back = await Task.detached { value }.value
        #expect(back == Self.sample)
    }
}
