import DefaultsPropertyList
import Foundation

/// The text of a value in an edit control, and the fingerprint a write compares.
///
/// The text is what ``DefaultsCommandCore/ValueParsing/value(_:as:)`` reads back as the same
/// value: a date in ISO 8601, data in hexadecimal, a collection as an XML property-list fragment
/// (typed, where old-style text would read `(1, 2)` as strings).
package enum EditorValueText {
    package static func editText(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let string): return string
        case .integer(let integer): return String(integer)
        case .unsignedInteger(let integer): return String(integer)
        case .real(let real): return "\(real)"
        case .boolean(let boolean): return boolean ? "true" : "false"
        case .date(let date):
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: date)
        case .data(let data): return data.map { byte in String(byte, radix: 16).leftPadded(to: 2) }.joined()
        case .array, .dictionary: return xmlFragment(value)
        }
    }

    /// A stable name of `value` (FNV-1a of its XML property list), the same in every process:
    /// the page sends back the one it saw, and a write refuses to overwrite another.
    package static func fingerprint(_ value: PropertyListValue?) -> String? {
        guard let value else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in xml(value) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16).leftPadded(to: 16)
    }

    private static func xml(_ value: PropertyListValue) -> Data {
        (try? PropertyList.encodeXML(value.object)) ?? Data()
    }

    /// The XML property list of `value` without its document's header and `<plist>` element.
    private static func xmlFragment(_ value: PropertyListValue) -> String {
        let document = String(decoding: xml(value), as: UTF8.self)
        guard let start = document.range(of: "<plist version=\"1.0\">"),
            let end = document.range(of: "</plist>", options: .backwards)
        else { return document }
        return document[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
