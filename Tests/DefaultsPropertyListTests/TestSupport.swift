import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// Builds random property-list values for the round-trip and cross-check tests.
struct ValueGenerator {
    var random: SeededGenerator
    /// Only reals whose shortest text is also what Foundation prints, so output can be compared byte for byte.
    var foundationExactReals = false
    /// Only ASCII keys, whose sort order is the same under every collation.
    var asciiKeys = false

    static let sampleStrings = [
        "", "plain", "with space", "<&>", "a&amp;b", "quote\"apos'", "tab\tnew\nline", "crlf\r\n",
        "emoji 😀👩‍👩‍👧", "café", "日本語", "\u{1}\u{1F}", "]]>", "  padded  ", "-", "0", "+5", "<string>",
    ]

    mutating func value(depth: Int = 0) -> Any {
        let containerWeight = depth < 4 ? 3 : 0
        switch Int.random(in: 0..<(9 + containerWeight), using: &random) {
        case 0: return string()
        case 1: return integer()
        case 2: return real()
        case 3: return Bool.random(using: &random)
        case 4:
            // Whole seconds: XML stores dates to the second.
            return Date(
                timeIntervalSinceReferenceDate: Double(Int.random(in: -4_000_000_000...4_000_000_000, using: &random)))
        case 5:
            return Data(
                (0..<Int.random(in: 0..<120, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 6: return string()
        case 7: return integer()
        case 8: return Bool.random(using: &random)
        case 9, 10:
            return (0..<Int.random(in: 0..<6, using: &random)).map { _ in value(depth: depth + 1) }
        default:
            var dictionary: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0..<6, using: &random) { dictionary[key()] = value(depth: depth + 1) }
            return dictionary
        }
    }

    mutating func key() -> String {
        if asciiKeys {
            let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.<&>")
            return String(
                (0..<Int.random(in: 0..<10, using: &random)).map { _ in letters.randomElement(using: &random) ?? "a" })
        }
        return string()
    }

    mutating func string() -> String {
        if Bool.random(using: &random) { return ValueGenerator.sampleStrings.randomElement(using: &random) ?? "" }
        let scalars = (0..<Int.random(in: 0..<12, using: &random)).compactMap { _ -> Character? in
            let ranges: [ClosedRange<UInt32>] = [
                0x20...0x7E, 0x20...0x7E, 0xA0...0x2FF, 0x4E00...0x4E80, 0x1F600...0x1F64F,
            ]
            let range = ranges.randomElement(using: &random) ?? 0x20...0x7E
            return Unicode.Scalar(UInt32.random(in: range, using: &random)).map(Character.init)
        }
        return String(scalars)
    }

    mutating func integer() -> Any {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            return [Int.min, Int.max, 0, -1, 1, Int(Int32.max), Int(Int32.min) - 1].randomElement(using: &random) ?? 0
        case 1: return UInt64.random(in: (UInt64(Int.max) + 1)...UInt64.max, using: &random)
        case 2: return Int.random(in: Int.min...Int.max, using: &random)
        default: return Int.random(in: -1000...100_000, using: &random)
        }
    }

    mutating func real() -> Double {
        if foundationExactReals {
            return [0.5, -2.25, 1, 0, 1024, .infinity, -.infinity, 3.75, 1e3].randomElement(using: &random) ?? 0
        }
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            return [
                0.1, -0.0, .nan, .infinity, -.infinity, .pi, 1e300, Double.leastNonzeroMagnitude,
                .greatestFiniteMagnitude,
            ]
            .randomElement(using: &random) ?? 0
        case 1: return Double(Int.random(in: -1000...1000, using: &random))
        default: return Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
        }
    }
}

/// Foundation's decoding of `data`, in this module's value model.
func foundationDecode(_ data: Data) throws -> Any {
    try PropertyList.normalize(try PropertyListSerialization.propertyList(from: data, options: [], format: nil))
}

func foundationEncode(_ value: Any, _ format: PropertyListSerialization.PropertyListFormat) throws -> Data {
    try PropertyListSerialization.data(fromPropertyList: value, format: format, options: 0)
}

func xmlString(_ value: Any) throws -> String {
    String(decoding: try PropertyList.encodeXML(value), as: UTF8.self)
}

/// Asserts that decoding `text` throws a ``PropertyListError`` (and does not crash).
func expectDecodeError(
    _ text: String,
    kind: PropertyListError.Kind? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectDecodeError(Data(text.utf8), kind: kind, sourceLocation: sourceLocation)
}

func expectDecodeError(
    _ data: Data,
    kind: PropertyListError.Kind? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let value = try PropertyList.decode(data)
        Issue.record("expected an error, decoded \(value)", sourceLocation: sourceLocation)
    } catch {
        if let kind { #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation) }
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    }
}

/// Wraps a value element in the document header Foundation writes.
func plistDocument(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    \(body)
    </plist>

    """
}
