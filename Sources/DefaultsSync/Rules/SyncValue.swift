import DefaultsPropertyList
import Foundation

/// How a stored value travels: an XML property list (deterministic: dictionary keys sorted); and
/// a short digest of a value that tells whether it changed since it was last synced.
enum SyncValue {
    /// iCloud's limit for one value; larger values are refused, never truncated.
    static let maximumSize = 1_048_576

    /// The digest recorded for a key with no stored value.
    static let absentDigest = "-"

    enum Problem: Error, CustomStringConvertible {
        case tooLarge(key: String, size: Int)
        case unencodable(key: String, PropertyListError)
        case undecodable(key: String, PropertyListError)

        var description: String {
            switch self {
            case .tooLarge(let key, let size):
                "The value of iCloud key \"\(key)\" is \(size) bytes, over the 1 MB limit; it is kept locally and not synced"
            case .unencodable(let key, let error):
                "The value of iCloud key \"\(key)\" cannot be encoded: \(error)"
            case .undecodable(let key, let error):
                "A remote value of iCloud key \"\(key)\" is not a property list and is ignored: \(error)"
            }
        }
    }

    /// The encoded form of `value` (`nil` stays `nil`), checked against ``maximumSize``.
    static func encode(_ value: PropertyListValue?, key: String) throws(Problem) -> Data? {
        guard let value else { return nil }
        let data: Data
        do {
            data = try PropertyList.encodeXML(value)
        } catch {
            throw .unencodable(key: key, error)
        }
        guard data.count <= maximumSize else { throw .tooLarge(key: key, size: data.count) }
        return data
    }

    /// The value an encoded record holds.
    static func decode(_ data: Data?, key: String) throws(Problem) -> PropertyListValue? {
        guard let data else { return nil }
        do {
            return try PropertyList.decodeValue(data)
        } catch {
            throw .undecodable(key: key, error)
        }
    }

    /// The digest of `value` itself (``absentDigest`` for none): `v` and FNV-1a (64 bits), in hex,
    /// of its kind and contents, dictionaries by sorted key, dates in the whole seconds a suite's
    /// file keeps; values equal as property lists have one digest. Telling whether a value
    /// changed costs no encoding.
    static func digest(of value: PropertyListValue?) -> String {
        guard let value else { return absentDigest }
        var hash = FNV1a()
        hash.add(value)
        return "v" + String(hash.value, radix: 16)
    }

    /// The digest of `value` in the form `recorded` was made in (the current form when `nil`):
    /// journals written before digests were taken of values themselves hold digests of their XML
    /// encoding (hex alone), compared as such until the key's next change replaces them.
    static func digest(of value: PropertyListValue?, likeRecorded recorded: String?) -> String {
        guard let recorded, recorded.first != "v", recorded != absentDigest, let value,
            let data = try? PropertyList.encodeXML(value)
        else { return digest(of: value) }
        var hash = FNV1a()
        hash.add(bytes: data)
        return String(hash.value, radix: 16)
    }
}

/// FNV-1a, 64 bits.
private struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }
    }

    mutating func add(_ integer: UInt64) {
        withUnsafeBytes(of: integer.littleEndian) { add(bytes: $0) }
    }

    /// The value's kind, then its contents, each of variable length preceded by its length;
    /// normalized as property-list equality is (`NaN`s alike, `-0.0` as `0.0`, an unsigned
    /// integer that fits `Int` as an integer).
    mutating func add(_ value: PropertyListValue) {
        switch value {
        case .string(let string):
            add(kind: 0, length: string.utf8.count)
            add(bytes: string.utf8)
        case .integer(let integer):
            add(kind: 1, length: 8)
            add(UInt64(bitPattern: Int64(integer)))
        case .unsignedInteger(let integer):
            if integer <= UInt64(Int.max) {
                add(.integer(Int(integer)))
            } else {
                add(kind: 2, length: 8)
                add(integer)
            }
        case .real(let real):
            add(kind: 3, length: 8)
            add(Self.normalized(real).bitPattern)
        case .boolean(let boolean):
            add(kind: 4, length: 1)
            add(bytes: CollectionOfOne(boolean ? 1 : 0))
        case .date(let date):
            // As a suite's file keeps it: a date read back from the file is the same value.
            add(kind: 5, length: 8)
            add(Self.normalized(PropertyList.xmlStoredSeconds(of: date)).bitPattern)
        case .data(let data):
            add(kind: 6, length: data.count)
            add(bytes: data)
        case .array(let array):
            add(kind: 7, length: array.count)
            for element in array {
                add(element)
            }
        case .dictionary(let dictionary):
            add(kind: 8, length: dictionary.count)
            for key in dictionary.keys.sorted() {
                add(.string(key))
                if let element = dictionary[key] {
                    add(element)
                }
            }
        }
    }

    private mutating func add(kind: UInt8, length: Int) {
        add(bytes: CollectionOfOne(kind))
        add(UInt64(length))
    }

    private static func normalized(_ real: Double) -> Double {
        real.isNaN ? .nan : (real == 0 ? 0 : real)
    }
}
