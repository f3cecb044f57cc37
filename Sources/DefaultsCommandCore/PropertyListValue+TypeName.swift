import DefaultsPropertyList

extension PropertyListValue {
    /// The type name `defaults read-type` prints: `string`, `integer`, `float`, `boolean`,
    /// `date`, `data`, `array`, `dictionary`.
    package var typeName: String {
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
}
