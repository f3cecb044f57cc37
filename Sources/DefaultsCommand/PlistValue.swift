import DefaultsPropertyList
import Foundation

/// One property-list value, told apart by its exact type.
///
/// Exact types, not `as?` casts: on Apple platforms a bridging cast turns a `Bool` into an `Int`
/// and back, which would make `read-type` and `--json` lie.
enum PlistValue {
    case string(String)
    case integer(Int)
    case unsignedInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case date(Date)
    case data(Data)
    case array([Any])
    case dictionary([String: Any])

    init?(_ value: Any) {
        let value = Self.normalized(value)
        switch ObjectIdentifier(type(of: value)) {
        case ObjectIdentifier(String.self): self = .string(value as? String ?? "")
        case ObjectIdentifier(Int.self): self = .integer(value as? Int ?? 0)
        case ObjectIdentifier(UInt64.self): self = .unsignedInteger(value as? UInt64 ?? 0)
        case ObjectIdentifier(Double.self): self = .real(value as? Double ?? 0)
        case ObjectIdentifier(Bool.self): self = .boolean(value as? Bool ?? false)
        case ObjectIdentifier(Date.self): self = .date(value as? Date ?? Date(timeIntervalSinceReferenceDate: 0))
        case ObjectIdentifier(Data.self): self = .data(value as? Data ?? Data())
        case ObjectIdentifier([Any].self): self = .array(value as? [Any] ?? [])
        case ObjectIdentifier([String: Any].self): self = .dictionary(value as? [String: Any] ?? [:])
        default: return nil
        }
    }

    /// `value` in the codec's value model (`String`, `Int`, `UInt64`, `Double`, `Bool`, `Date`,
    /// `Data`, `[Any]`, `[String: Any]`); unchanged if it has no property-list form.
    static func normalized(_ value: Any) -> Any {
        (try? PropertyList.normalize(value)) ?? value
    }

    /// `value` as a dictionary, if it is one.
    static func dictionary(_ value: Any) -> [String: Any]? {
        if case .dictionary(let dictionary) = PlistValue(value) { dictionary } else { nil }
    }

    /// `value` as an array, if it is one.
    static func array(_ value: Any) -> [Any]? {
        if case .array(let array) = PlistValue(value) { array } else { nil }
    }

    /// The type name `defaults read-type` prints: `string`, `integer`, `float`, `boolean`,
    /// `date`, `data`, `array`, `dictionary`.
    var typeName: String {
        switch self {
        case .string: "string"
        case .integer, .unsignedInteger: "integer"
        case .real: "float"
        case .boolean: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// `value`'s type name with an article, for messages.
    static func typeName(_ value: Any) -> String {
        guard let kind = PlistValue(value) else { return "a \(type(of: value))" }
        switch kind {
        case .integer, .unsignedInteger, .array: return "an \(kind.typeName)"
        default: return "a \(kind.typeName)"
        }
    }
}
