import DefaultsPropertyList
import Foundation

/// How a stored value travels: an XML property list (deterministic: dictionary keys sorted), and
/// a short digest of it that tells whether a value changed since it was last synced.
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

    /// FNV-1a (64 bits) of the encoded value, in hex; ``absentDigest`` for no value.
    static func digest(_ data: Data?) -> String {
        guard let data else { return absentDigest }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
