import DefaultsPropertyList
import Foundation

/// The text of a value in an edit control, and the fingerprint a write compares.
///
/// The text is what ``DefaultsCommandCore/ValueParsing/value(_:as:)`` reads back as the same
/// value: a date in ISO 8601, data in hexadecimal, a collection as an XML property-list fragment
/// (typed, where old-style text would read `(1, 2)` as strings).
package enum EditorValueText {
    /// The longest text of a value the page is sent (64 KB): more is no setting a person edits in
    /// a page, and a domain of such values would make answers of hundreds of megabytes.
    package static let textLimit = 64 << 10

    /// `text` cut to ``textLimit`` bytes (at a character), and whether it was.
    package static func bounded(_ text: String) -> (text: String, isCut: Bool) {
        guard text.utf8.count > textLimit else { return (text, false) }
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let size = text[index].utf8.count
            guard kept + size <= textLimit else { break }
            kept += size
            end = text.index(after: index)
        }
        return (String(text[..<end]) + "…", true)
    }

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

    /// A stable name of `value` (FNV-1a of every type, length and bit of it, dates to the
    /// bit), the same in every process: the page sends back the one it saw, and a write refuses to
    /// overwrite another.
    package static func fingerprint(_ value: PropertyListValue?) -> String? {
        guard let value else { return nil }
        var hash = Fingerprint()
        hash.add(value)
        return String(hash.value, radix: 16).leftPadded(to: 16)
    }

    private struct Fingerprint {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
        }

        mutating func add(_ number: UInt64) {
            add(withUnsafeBytes(of: number.littleEndian, Array.init))
        }

        mutating func add(_ text: String) {
            add(UInt64(text.utf8.count))
            add(text.utf8)
        }

        mutating func add(_ value: PropertyListValue) {
            switch value {
            case .string(let string):
                add([1])
                add(string)
            case .integer(let integer):
                add([2])
                add(UInt64(bitPattern: Int64(integer)))
            case .unsignedInteger(let integer):
                add([3])
                add(integer)
            case .real(let real):
                add([4])
                add(real.bitPattern)
            case .boolean(let boolean):
                add([boolean ? 5 : 6])
            case .date(let date):
                add([7])
                add(date.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let data):
                add([8])
                add(UInt64(data.count))
                add(data)
            case .array(let array):
                add([9])
                add(UInt64(array.count))
                for element in array {
                    add(element)
                }
            case .dictionary(let dictionary):
                add([10])
                add(UInt64(dictionary.count))
                for key in dictionary.keys.sorted() {
                    add(key)
                    add(dictionary[key]!)
                }
            }
        }
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
