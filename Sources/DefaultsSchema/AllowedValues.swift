/// The values a key allows besides its type: a closed range, or a list of choices.
///
/// In JSON, `{"range": {"lowerBound": {"integer": 8}, "upperBound": {"integer": 72}}}` or
/// `{"choices": [{"string": "light"}, {"string": "dark"}]}`, each value a ``SchemaValue``.
public enum AllowedValues: Sendable, Hashable, Codable {
    /// Every value from `lowerBound` through `upperBound`, compared as ``SchemaValue/compare(_:_:)`` does.
    case range(lowerBound: SchemaValue, upperBound: SchemaValue)
    /// Exactly these values.
    case choices([SchemaValue])

    /// Whether `value` is allowed.
    public func allows(_ value: SchemaValue) -> Bool {
        switch self {
        case .range(let lowerBound, let upperBound):
            guard let low = SchemaValue.compare(lowerBound, value), let high = SchemaValue.compare(value, upperBound)
            else { return false }
            return low != .orderedDescending && high != .orderedDescending
        case .choices(let choices):
            return choices.contains { $0 == value || SchemaValue.compare($0, value) == .orderedSame }
        }
    }

    /// `8 through 72`, or `one of light, dark, system`.
    public var summary: String {
        switch self {
        case .range(let lowerBound, let upperBound): "\(lowerBound) through \(upperBound)"
        case .choices(let choices): "one of " + choices.map(\.description).joined(separator: ", ")
        }
    }

    private enum CodingKeys: String, CodingKey {
        case range, choices
    }

    private struct Bounds: Codable {
        var lowerBound: SchemaValue
        var upperBound: SchemaValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let bounds = try container.decodeIfPresent(Bounds.self, forKey: .range) {
            self = .range(lowerBound: bounds.lowerBound, upperBound: bounds.upperBound)
        } else if let choices = try container.decodeIfPresent([SchemaValue].self, forKey: .choices) {
            self = .choices(choices)
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "allowed values are a range or choices"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .range(let lowerBound, let upperBound):
            try container.encode(Bounds(lowerBound: lowerBound, upperBound: upperBound), forKey: .range)
        case .choices(let choices):
            try container.encode(choices, forKey: .choices)
        }
    }
}
