import Configuration
import Defaults
import DefaultsConfiguration
import Foundation
import Testing

/// One stored value read as one type, and what the provider gives (`nil`: a conversion error).
struct Conversion: Sendable, CustomTestStringConvertible {
    let stored: @Sendable () -> Any
    let type: ConfigType
    let expected: ConfigContent?
    let label: String

    init(
        _ label: String, _ stored: @autoclosure @escaping @Sendable () -> Any, as type: ConfigType,
        _ expected: ConfigContent?
    ) {
        self.label = label
        self.stored = stored
        self.type = type
        self.expected = expected
    }

    var testDescription: String { "\(label) as \(type.rawValue)" }
}

@Suite("DefaultsProvider conversions")
struct DefaultsProviderConversionTests {
    static let conversions: [Conversion] = [
        // As swift-configuration's property-list file provider converts them.
        Conversion("string", "hello", as: .string, .string("hello")),
        Conversion("integer", 42, as: .int, .int(42)),
        Conversion("true", true, as: .int, .int(1)),
        Conversion("whole double", 3.0, as: .int, .int(3)),
        Conversion("large unsigned within Int", UInt64(7), as: .int, .int(7)),
        Conversion("double", 2.5, as: .double, .double(2.5)),
        Conversion("integer", 2, as: .double, .double(2)),
        Conversion("false", false, as: .double, .double(0)),
        Conversion("true", true, as: .bool, .bool(true)),
        Conversion("zero", 0, as: .bool, .bool(false)),
        Conversion("non-zero double", 0.5, as: .bool, .bool(true)),
        Conversion("data", Data([1, 2, 255]), as: .bytes, .bytes([1, 2, 255])),
        Conversion("strings", ["a", "b"], as: .stringArray, .stringArray(["a", "b"])),
        Conversion("numbers", [1, 2.0, true] as [Any], as: .intArray, .intArray([1, 2, 1])),
        Conversion("integers", [1, 2], as: .doubleArray, .doubleArray([1, 2])),
        Conversion("numbers", [0, 1], as: .boolArray, .boolArray([false, true])),
        Conversion("data", [Data([1]), Data([2, 3])], as: .byteChunkArray, .byteChunkArray([[1], [2, 3]])),
        Conversion("empty array", [Any](), as: .intArray, .intArray([])),
        Conversion("empty array", [Any](), as: .stringArray, .stringArray([])),
        // Mismatches.
        Conversion("number", 5, as: .string, nil),
        Conversion("numeric string", "5", as: .int, nil),
        Conversion("fractional double", 2.5, as: .int, nil),
        Conversion("unsigned above Int.max", UInt64.max, as: .int, nil),
        Conversion("string", "yes", as: .bool, nil),
        Conversion("base64 string", "AQI=", as: .bytes, nil),
        Conversion("date", Date(timeIntervalSince1970: 0), as: .string, nil),
        Conversion("date", Date(timeIntervalSince1970: 0), as: .double, nil),
        Conversion("mixed array", ["a", 1] as [Any], as: .stringArray, nil),
        Conversion("mixed array", ["a", 1] as [Any], as: .intArray, nil),
        Conversion("scalar", "a", as: .stringArray, nil),
        Conversion("array", ["a"], as: .string, nil),
    ]

    @Test("Stored values convert as the file providers convert them", arguments: conversions)
    func conversion(_ conversion: Conversion) throws {
        let suite = InMemorySuite(name: "conversion-\(UUID().uuidString)")
        suite.set(["value": conversion.stored()], forKey: "nested")
        let provider = DefaultsProvider(suite: suite)
        let key: AbsoluteConfigKey = ["nested", "value"]
        if let expected = conversion.expected {
            #expect(try provider.value(forKey: key, type: conversion.type).value?.content == expected)
        } else {
            #expect(throws: DefaultsProviderError.valueNotConvertible(key: "nested.value", type: conversion.type)) {
                try provider.value(forKey: key, type: conversion.type)
            }
        }
    }

    @Test("A mismatch gives the reader's default, and a required read names the key")
    func mismatchInReader() throws {
        let suite = InMemorySuite(name: "mismatch-\(UUID().uuidString)")
        suite.set("not a number", forKey: "port")
        let config = ConfigReader(provider: DefaultsProvider(suite: suite))
        #expect(config.int(forKey: "port", default: 80) == 80)
        #expect(config.int(forKey: "port") == nil)
        let error = #expect(throws: (any Error).self) { try config.requiredInt(forKey: "port") }
        #expect(String(describing: error).contains("port"))
        // The stored value is left as it was.
        #expect(suite.object(forKey: "port") as? String == "not a number")
    }

    @Test("A mismatch stops the search: the provider below is not asked, as in every provider stack")
    func mismatchShadowsLowerProviders() throws {
        let suite = InMemorySuite(name: "shadow-\(UUID().uuidString)")
        suite.set("fast", forKey: "speed")
        let config = ConfigReader(providers: [
            DefaultsProvider(suite: suite),
            InMemoryProvider(values: ["speed": 3]),
        ])
        #expect(config.int(forKey: "speed", default: 1) == 1)
    }
}
