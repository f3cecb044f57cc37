import Foundation

/// The schema of one domain: every key a program declared, with its type, default and meaning.
///
/// A program writes it as JSON (see ``SchemaLocations``), and the `defaults` command reads it to
/// list, describe and check the domain's keys. The format is versioned by
/// ``serializationVersion``: a reader refuses a version newer than it knows
/// (``decode(from:)``), and fields added to version 0 are optional.
///
/// ```json
/// {
///   "serializationVersion": 0,
///   "domain": "com.example.app",
///   "keys": [
///     {"name": "fontSize", "type": "integer", "swiftType": "Swift.Int",
///      "defaultValue": {"integer": 12}, "isDefaultDynamic": false,
///      "description": "The size of the editor's text, in points.",
///      "allowedValues": {"range": {"lowerBound": {"integer": 8}, "upperBound": {"integer": 72}}},
///      "iCloud": false}
///   ]
/// }
/// ```
public struct DomainSchema: Sendable, Hashable, Codable {
    /// The version of the format this library writes.
    public static let currentSerializationVersion = 0

    /// The version of the format of this schema.
    public var serializationVersion: Int
    /// The domain (suite name) the keys are stored in.
    public var domain: String
    /// The keys, sorted by name, one per name.
    public var keys: [KeySchema]

    /// Creates a schema in the current format; `keys` are sorted by name.
    public init(domain: String, keys: [KeySchema]) {
        serializationVersion = Self.currentSerializationVersion
        self.domain = domain
        self.keys = keys.sorted { $0.name < $1.name }
    }

    /// The key named `name`, if the schema has it.
    public func key(named name: String) -> KeySchema? {
        keys.first { $0.name == name }
    }

    /// A schema that a reader of this version cannot read.
    public struct UnsupportedVersion: Error, CustomStringConvertible {
        /// The version the file has.
        public var version: Int

        public var description: String {
            "its format is version \(version); this reader knows versions up to "
                + "\(DomainSchema.currentSerializationVersion)"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case serializationVersion, domain, keys
    }

    /// Decodes a schema, checking its version before anything else, so that a newer format is
    /// refused as such rather than for a field it changed.
    ///
    /// - Throws: ``UnsupportedVersion`` for a newer format, or a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serializationVersion = try container.decode(Int.self, forKey: .serializationVersion)
        guard serializationVersion <= Self.currentSerializationVersion, serializationVersion >= 0 else {
            throw UnsupportedVersion(version: serializationVersion)
        }
        domain = try container.decode(String.self, forKey: .domain)
        keys = try container.decode([KeySchema].self, forKey: .keys)
    }

    /// Reads a schema from JSON, as `JSONDecoder` decodes it (``init(from:)``): the same schemas
    /// accepted, the same errors thrown.
    ///
    /// A file as ``encoded()`` writes it is read by a quick reader of its own, several times
    /// cheaper than `JSONDecoder`; any document that reader declines (malformed, of a newer
    /// version, spelled unusually) is decoded by `JSONDecoder`, whose verdict is the rule.
    ///
    /// - Throws: ``UnsupportedVersion`` for a newer format, or a `DecodingError`.
    public static func decode(from data: Data) throws -> DomainSchema {
        if let schema = quicklyRead(data) {
            return schema
        }
        return try JSONDecoder().decode(DomainSchema.self, from: data)
    }

    /// The schema as JSON: pretty-printed with sorted keys, so that the same schema is always
    /// the same bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
