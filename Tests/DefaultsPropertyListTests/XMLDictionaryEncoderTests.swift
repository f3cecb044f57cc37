import DefaultsPropertyList
import Foundation
import Testing

/// The incremental encoder writes exactly what a full encoding writes, whatever changed.
@Suite("XMLDictionaryEncoder")
struct XMLDictionaryEncoderTests {
    /// Encodes with `encoder` and checks it against a full encoding of the same dictionary.
    private func expectSameAsFullEncoding(
        _ encoder: inout XMLDictionaryEncoder, _ dictionary: [String: Any],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let incremental = try encoder.encode(dictionary.mapValues { try PropertyListValue($0) })
        let full = try PropertyList.encodeXML(dictionary)
        #expect(
            String(decoding: incremental, as: UTF8.self) == String(decoding: full, as: UTF8.self),
            sourceLocation: sourceLocation)
    }

    @Test func everyKindOfChangeGivesTheFullEncoding() throws {
        var encoder = XMLDictionaryEncoder()
        var values: [String: Any] = [
            "int": 1, "string": "a < b & c", "real": 0.5, "flag": true,
            "date": Date(timeIntervalSinceReferenceDate: 1_000), "data": Data([1, 2, 3]),
            "list": [1, "two", [3.0]], "nested": ["inner": ["deep": 1]],
        ]
        try expectSameAsFullEncoding(&encoder, values)
        try expectSameAsFullEncoding(&encoder, values)  // nothing changed
        values["int"] = 2
        try expectSameAsFullEncoding(&encoder, values)
        values["int"] = true  // same truth, another kind
        try expectSameAsFullEncoding(&encoder, values)
        values["int"] = 1.0
        try expectSameAsFullEncoding(&encoder, values)
        values["real"] = -0.0
        try expectSameAsFullEncoding(&encoder, values)
        values["real"] = 0.0  // equal to -0.0, written differently
        try expectSameAsFullEncoding(&encoder, values)
        values["nested"] = ["inner": ["deep": 2]]
        try expectSameAsFullEncoding(&encoder, values)
        values["list"] = [1, "two", [3.0], "four"]
        try expectSameAsFullEncoding(&encoder, values)
        values["aaa first"] = "added"  // a key added before every other
        try expectSameAsFullEncoding(&encoder, values)
        values["string"] = nil  // a key removed
        try expectSameAsFullEncoding(&encoder, values)
        values = [:]
        try expectSameAsFullEncoding(&encoder, values)
        values = ["back": "again"]
        try expectSameAsFullEncoding(&encoder, values)
    }

    /// Random changes to a dictionary of a few hundred keys, checked after each flush.
    @Test func randomChangesGiveTheFullEncoding() throws {
        var generator = SplitMix(seed: 0x5EED)
        var encoder = XMLDictionaryEncoder()
        var values: [String: Any] = [:]
        for index in 0..<300 {
            values["key\(index)"] = index
        }
        for _ in 0..<200 {
            for _ in 0..<Int(generator.next() % 4) {
                let key = "key\(generator.next() % 320)"
                switch generator.next() % 6 {
                case 0: values[key] = nil
                case 1: values[key] = "s\(generator.next() % 10)"
                case 2: values[key] = Double(generator.next() % 10) / 4
                case 3: values[key] = [Int(generator.next() % 3)]
                case 4: values[key] = generator.next() % 2 == 0
                default: values[key] = Int(generator.next() % 10)
                }
            }
            try expectSameAsFullEncoding(&encoder, values)
        }
    }

    /// A value nested deeper than the readers accept is refused, and the encoder goes on
    /// correctly after.
    @Test func aTooDeepValueThrowsAndTheNextEncodingIsRight() throws {
        var encoder = XMLDictionaryEncoder()
        var values: [String: Any] = ["a": 1, "b": 2]
        try expectSameAsFullEncoding(&encoder, values)
        #expect(throws: PropertyListError.self) {
            try encoder.encode(["a": .integer(1), "b": tooDeep])
        }
        values["b"] = 3
        try expectSameAsFullEncoding(&encoder, values)
    }

    /// Encodes with the keys that changed given, and checks it against a full encoding.
    private func expectHintedSameAsFullEncoding(
        _ encoder: inout XMLDictionaryEncoder, _ dictionary: [String: Any], changedKeys: Set<String>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let incremental = try encoder.encode(
            dictionary.mapValues { try PropertyListValue($0) }, changedKeys: changedKeys)
        let full = try PropertyList.encodeXML(dictionary)
        #expect(
            String(decoding: incremental, as: UTF8.self) == String(decoding: full, as: UTF8.self),
            sourceLocation: sourceLocation)
    }

    /// With the changed keys given (values changed, keys added and removed, first and last
    /// entries, entries that grow and shrink), the output is still the full encoding.
    @Test func randomChangesWithTheChangedKeysGiveTheFullEncoding() throws {
        var generator = SplitMix(seed: 0xC0FFEE)
        var encoder = XMLDictionaryEncoder()
        var values: [String: Any] = [:]
        for index in 0..<300 {
            values["key\(index)"] = index
        }
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: [])
        for round in 0..<300 {
            var changed = Set<String>()
            for _ in 0..<Int(generator.next() % 5) {
                // Mostly existing keys, so that most rounds take the path that skips comparisons.
                let key = "key\(generator.next() % (round % 10 == 0 ? 320 : 300))"
                changed.insert(key)
                switch generator.next() % 6 {
                case 0: values[key] = round % 10 == 0 ? nil : "s"
                case 1: values[key] = String(repeating: "long ", count: Int(generator.next() % 20))
                case 2: values[key] = Double(generator.next() % 10) / 4
                case 3: values[key] = [Int(generator.next() % 3), "x"]
                case 4: values[key] = generator.next() % 2 == 0
                default: values[key] = Int(generator.next() % 10)
                }
            }
            if generator.next() % 4 == 0 {
                changed.insert("key\(generator.next() % 300)")  // given but unchanged: harmless
            }
            try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: changed)
        }
    }

    /// The first and the last entries, and every entry at once.
    @Test func changedKeysAtTheEdges() throws {
        var encoder = XMLDictionaryEncoder()
        var values: [String: Any] = ["a": 1, "m": 2, "z": 3]
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["a", "m", "z"])
        values["a"] = "first, longer"
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["a"])
        values["z"] = false
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["z"])
        values = ["a": 0.5, "m": [1], "z": ["inner": 1]]
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["a", "m", "z"])
        values = [:]
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["a", "m", "z"])
        values = ["b": 1]
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["b"])
    }

    /// A value nested too deeply among the changed keys is refused and leaves the
    /// encoder as it was: the next encoding, with the keys changed since the last one that
    /// returned, is right.
    @Test func aTooDeepChangedValueThrowsAndTheNextEncodingIsRight() throws {
        var encoder = XMLDictionaryEncoder()
        var values: [String: Any] = ["a": 1, "b": 2, "c": 3]
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: [])
        #expect(throws: PropertyListError.self) {
            try encoder.encode(["a": .integer(10), "b": tooDeep, "c": .integer(3)], changedKeys: ["a", "b"])
        }
        values["c"] = 30
        try expectHintedSameAsFullEncoding(&encoder, values, changedKeys: ["c"])
    }
}

/// Arrays nested one level deeper than ``PropertyList/maximumDepth``: a value no writer writes.
private let tooDeep: PropertyListValue = (0...PropertyList.maximumDepth).reduce(.integer(0)) { inner, _ in
    .array([inner])
}

/// A small deterministic generator, so that a failure can be replayed.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
