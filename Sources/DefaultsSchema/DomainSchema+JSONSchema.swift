import Foundation

extension DomainSchema {
    /// The URI of the JSON Schema dialect ``jsonSchema()`` writes: draft 2020-12.
    public static let jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// A JSON Schema (draft 2020-12) of the dictionary an administrator's vendor file
    /// (`<dir>/<domain>.plist`) or managed file (`<dir>/managed/<domain>.plist`) holds, written as
    /// JSON, for editors that check and complete what is typed.
    ///
    /// Each key is a property with its `type` (`integer`, `number` for a float, `boolean`,
    /// `string`, `array`, `object`; a date is a `string` of `format` `date-time` and data a
    /// `string` of `contentEncoding` `base64`, as a JSON form of a property list writes them), its
    /// `description`, its `default`, `minimum` and `maximum` from a range of numbers, and `enum`
    /// from choices. A range of strings or dates, which JSON Schema cannot state, is said in the
    /// description. `additionalProperties` is true: a file may hold keys the schema does not list
    /// (a program lists the keys it has used when it exports its schema).
    ///
    /// - Returns: The JSON Schema, pretty-printed with sorted keys, so that the same schema is
    ///   always the same bytes.
    public func jsonSchema() throws -> Data {
        var properties: [String: Any] = [:]
        for key in keys {
            properties[key.name] = key.jsonSchemaProperty()
        }
        let document: [String: Any] = [
            "$schema": Self.jsonSchemaDialect,
            "title": domain,
            "description": "The settings of \(domain) as an administrator's \(domain).plist (vendor defaults) or "
                + "managed/\(domain).plist (enforced values) holds them, written as JSON.",
            "type": "object",
            "properties": properties,
            "additionalProperties": true,
        ]
        return try JSONSerialization.data(
            withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }
}

extension KeySchema {
    /// This key as a property of ``DomainSchema/jsonSchema()``.
    func jsonSchemaProperty() -> [String: Any] {
        var property: [String: Any] = [:]
        switch type {
        case .string: property["type"] = "string"
        case .integer: property["type"] = "integer"
        case .real: property["type"] = "number"
        case .boolean: property["type"] = "boolean"
        case .date:
            property["type"] = "string"
            property["format"] = "date-time"
        case .data:
            property["type"] = "string"
            property["contentEncoding"] = "base64"
        case .array: property["type"] = "array"
        case .dictionary: property["type"] = "object"
        case nil: break
        }
        var description = description ?? ""
        if let defaultValue, let json = defaultValue.jsonValue {
            property["default"] = json
        }
        switch allowedValues {
        case .range(let lowerBound, let upperBound)?:
            if let lower = lowerBound.jsonNumber, let upper = upperBound.jsonNumber {
                property["minimum"] = lower
                property["maximum"] = upper
            } else {
                description += (description.isEmpty ? "" : " ") + "Allows \(allowedValues?.summary ?? "")."
            }
        case .choices(let choices)?:
            property["enum"] = choices.compactMap(\.jsonValue)
        case nil:
            break
        }
        if !description.isEmpty {
            property["description"] = description
        }
        return property
    }
}

extension SchemaValue {
    /// The value as JSON, as an administrator writes it in a JSON form of a property list: a
    /// date as an ISO 8601 string, data as base64; `nil` for a float JSON has no number for.
    var jsonValue: Any? {
        switch self {
        case .string(let string): return string
        case .integer(let integer): return integer
        case .unsignedInteger(let integer): return integer
        case .real(let real): return real.isFinite ? real : nil
        case .boolean(let boolean): return boolean
        case .date(let date): return date.formatted(.iso8601)
        case .data(let data): return data.base64EncodedString()
        case .array(let array):
            let elements = array.compactMap(\.jsonValue)
            return elements.count == array.count ? elements : nil
        case .dictionary(let dictionary):
            let members = dictionary.compactMapValues(\.jsonValue)
            return members.count == dictionary.count ? members : nil
        }
    }

    /// The value as a JSON number, for `minimum` and `maximum`; `nil` for any other value.
    fileprivate var jsonNumber: Any? {
        switch self {
        case .integer, .unsignedInteger: jsonValue
        case .real(let real) where real.isFinite: real
        default: nil
        }
    }
}
