import Foundation

/// A property-list value as a schema writes it in JSON, so that it reads back exactly.
///
/// Each value is a JSON object with one member naming its property-list type:
///
/// ```json
/// {"integer": 12}   {"float": 1.5}   {"boolean": true}   {"string": "dark"}
/// {"date": 1715000000.25}            (seconds since 1970, as a number)
/// {"data": "AAEC"}                   (base64)
/// {"array": [{"integer": 1}]}        {"dictionary": {"width": {"integer": 800}}}
/// ```
///
/// A float that is not finite, which JSON has no number for, is the string `"nan"`, `"+infinity"`
/// or `"-infinity"`. An integer above `Int.max` reads back as ``unsignedInteger(_:)``.
public indirect enum SchemaValue: Sendable, Hashable, Codable {
    case string(String)
    case integer(Int)
    case unsignedInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case date(Date)
    case data(Data)
    case array([SchemaValue])
    case dictionary([String: SchemaValue])

    /// The property-list type of the value.
    public var storedType: StoredType {
        switch self {
        case .string: .string
        case .integer, .unsignedInteger: .integer
        case .real: .real
        case .boolean: .boolean
        case .date: .date
        case .data: .data
        case .array: .array
        case .dictionary: .dictionary
        }
    }

    private struct TypeKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ type: StoredType) { stringValue = type.rawValue }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TypeKey.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first,
            let type = StoredType(rawValue: key.stringValue)
        else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "a value is an object with one member naming its type "
                        + StoredType.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        switch type {
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .integer:
            if let integer = try? container.decode(Int.self, forKey: key) {
                self = .integer(integer)
            } else {
                self = .unsignedInteger(try container.decode(UInt64.self, forKey: key))
            }
        case .real:
            if let real = try? container.decode(Double.self, forKey: key) {
                self = .real(real)
            } else {
                switch try container.decode(String.self, forKey: key) {
                case "nan": self = .real(.nan)
                case "+infinity": self = .real(.infinity)
                case "-infinity": self = .real(-.infinity)
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: key, in: container, debugDescription: "a float is a number, \"nan\" or \"±infinity\"")
                }
            }
        case .boolean: self = .boolean(try container.decode(Bool.self, forKey: key))
        case .date: self = .date(Date(timeIntervalSince1970: try container.decode(Double.self, forKey: key)))
        case .data:
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "data is base64")
            }
            self = .data(data)
        case .array: self = .array(try container.decode([SchemaValue].self, forKey: key))
        case .dictionary: self = .dictionary(try container.decode([String: SchemaValue].self, forKey: key))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TypeKey.self)
        let key = TypeKey(storedType)
        switch self {
        case .string(let string): try container.encode(string, forKey: key)
        case .integer(let integer): try container.encode(integer, forKey: key)
        case .unsignedInteger(let integer): try container.encode(integer, forKey: key)
        case .real(let real):
            if real.isFinite {
                try container.encode(real, forKey: key)
            } else {
                try container.encode(real.isNaN ? "nan" : real > 0 ? "+infinity" : "-infinity", forKey: key)
            }
        case .boolean(let boolean): try container.encode(boolean, forKey: key)
        case .date(let date): try container.encode(date.timeIntervalSince1970, forKey: key)
        case .data(let data): try container.encode(data.base64EncodedString(), forKey: key)
        case .array(let array): try container.encode(array, forKey: key)
        case .dictionary(let dictionary): try container.encode(dictionary, forKey: key)
        }
    }
}

extension SchemaValue {
    /// The value as a key stored as `type` reads it: an integer as the float a ``StoredType/real``
    /// key reads; any other value as it is.
    public func read(as type: StoredType?) -> SchemaValue {
        guard type == .real else { return self }
        switch self {
        case .integer(let integer): return .real(Double(integer))
        case .unsignedInteger(let integer): return .real(Double(integer))
        default: return self
        }
    }
}

extension SchemaValue: CustomStringConvertible {
    /// The value as people read it: `12`, `1.5`, `true`, `dark`, `(1, 2)`, `{ width = 800; }`.
    public var description: String {
        switch self {
        case .string(let string): string
        case .integer(let integer): String(integer)
        case .unsignedInteger(let integer): String(integer)
        case .real(let real): String(real)
        case .boolean(let boolean): String(boolean)
        case .date(let date): date.formatted(.iso8601)
        case .data(let data): "<" + data.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + ">"
        case .array(let array): "(" + array.map(\.description).joined(separator: ", ") + ")"
        case .dictionary(let dictionary):
            "{ " + dictionary.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value);" }.joined(separator: " ")
                + " }"
        }
    }
}

extension SchemaValue {
    /// How two values of one kind compare, for ranges: numbers by value (an integer and a float
    /// too), strings, dates; `nil` for values that have no order between them.
    public static func compare(_ lhs: SchemaValue, _ rhs: SchemaValue) -> ComparisonResult? {
        func order<T: Comparable>(_ lhs: T, _ rhs: T) -> ComparisonResult {
            lhs < rhs ? .orderedAscending : lhs > rhs ? .orderedDescending : .orderedSame
        }
        switch (lhs, rhs) {
        case (.string(let lhs), .string(let rhs)): return order(lhs, rhs)
        case (.date(let lhs), .date(let rhs)): return order(lhs, rhs)
        case (.integer(let lhs), .integer(let rhs)): return order(lhs, rhs)
        case (.unsignedInteger(let lhs), .unsignedInteger(let rhs)): return order(lhs, rhs)
        case (.integer(let lhs), .unsignedInteger(let rhs)):
            return lhs < 0 ? .orderedAscending : order(UInt64(lhs), rhs)
        case (.unsignedInteger(let lhs), .integer(let rhs)):
            return rhs < 0 ? .orderedDescending : order(lhs, UInt64(rhs))
        default:
            guard let lhs = lhs.number, let rhs = rhs.number, !lhs.isNaN, !rhs.isNaN else { return nil }
            return order(lhs, rhs)
        }
    }

    /// The value as a number, for comparing an integer with a float.
    private var number: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .unsignedInteger(let integer): Double(integer)
        case .real(let real): real
        default: nil
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
