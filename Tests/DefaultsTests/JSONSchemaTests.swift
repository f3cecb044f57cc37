import DefaultsSchema
import Foundation
import Testing

/// `DomainSchema.jsonSchema()`: the JSON Schema an administrator's editor checks files with.
@Suite("JSON Schema of a domain")
struct JSONSchemaTests {
    static let schema = DomainSchema(
        domain: "com.example.every-type",
        keys: [
            KeySchema(
                name: "fontSize", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(12),
                description: "Text size.", allowedValues: .range(lowerBound: .integer(8), upperBound: .integer(72))),
            KeySchema(
                name: "volume", type: .real, swiftType: "Swift.Double", defaultValue: .real(0.5),
                allowedValues: .range(lowerBound: .real(0), upperBound: .real(1.5))),
            KeySchema(
                name: "theme", type: .string, swiftType: "App.Theme", defaultValue: .string("system"),
                allowedValues: .choices([.string("light"), .string("dark"), .string("system")])),
            KeySchema(name: "enabled", type: .boolean, swiftType: "Swift.Bool", defaultValue: .boolean(false)),
            KeySchema(
                name: "since", type: .date, swiftType: "Foundation.Date",
                defaultValue: .date(Date(timeIntervalSince1970: 1_700_000_000))),
            KeySchema(name: "blob", type: .data, swiftType: "Foundation.Data", defaultValue: .data(Data([0, 1, 2]))),
            KeySchema(
                name: "recent", type: .array, swiftType: "Swift.Array<Swift.String>",
                defaultValue: .array([.string("a")])),
            KeySchema(
                name: "window", type: .dictionary, swiftType: "Swift.Dictionary<Swift.String, Swift.Int>",
                defaultValue: .dictionary(["width": .integer(800)])),
            KeySchema(
                name: "name", type: .string, swiftType: "Swift.String", defaultValue: .string("m"),
                description: "Who.", allowedValues: .range(lowerBound: .string("a"), upperBound: .string("n"))),
            KeySchema(name: "anything", type: nil, swiftType: "Swift.Optional<Any>", defaultValue: nil),
            KeySchema(
                name: "computed", type: .integer, swiftType: "Swift.Int", defaultValue: nil, isDefaultDynamic: true),
            KeySchema(name: "odd", type: .real, swiftType: "Swift.Double", defaultValue: .real(.nan)),
        ])

    static func document() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: schema.jsonSchema()) as? [String: Any])
    }

    static func property(_ name: String) throws -> [String: Any] {
        let properties = try #require(try document()["properties"] as? [String: Any])
        return try #require(properties[name] as? [String: Any], "\(properties.keys.sorted())")
    }

    @Test("A draft 2020-12 object schema of the domain, allowing keys it does not list")
    func document() throws {
        let document = try Self.document()
        #expect(document["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        #expect(document["type"] as? String == "object")
        #expect(document["additionalProperties"] as? Bool == true)
        #expect(document["title"] as? String == "com.example.every-type")
        let properties = try #require(document["properties"] as? [String: Any])
        #expect(properties.keys.sorted() == Self.schema.keys.map(\.name).sorted())
        // The same schema is always the same bytes.
        #expect(try Self.schema.jsonSchema() == Self.schema.jsonSchema())
    }

    @Test("Each stored type, its default, a range as minimum and maximum, choices as enum")
    func properties() throws {
        let fontSize = try Self.property("fontSize")
        #expect(fontSize["type"] as? String == "integer")
        #expect(fontSize["default"] as? Int == 12)
        #expect(fontSize["minimum"] as? Int == 8)
        #expect(fontSize["maximum"] as? Int == 72)
        #expect(fontSize["description"] as? String == "Text size.")

        let volume = try Self.property("volume")
        #expect(volume["type"] as? String == "number")
        #expect(volume["default"] as? Double == 0.5)
        #expect(volume["maximum"] as? Double == 1.5)

        let theme = try Self.property("theme")
        #expect(theme["type"] as? String == "string")
        #expect(theme["enum"] as? [String] == ["light", "dark", "system"])
        #expect(theme["minimum"] == nil)

        #expect(try Self.property("enabled")["type"] as? String == "boolean")
        #expect(try Self.property("enabled")["default"] as? Bool == false)

        let since = try Self.property("since")
        #expect(since["type"] as? String == "string")
        #expect(since["format"] as? String == "date-time")
        #expect(since["default"] as? String == "2023-11-14T22:13:20Z")

        let blob = try Self.property("blob")
        #expect(blob["type"] as? String == "string")
        #expect(blob["contentEncoding"] as? String == "base64")
        #expect(blob["default"] as? String == "AAEC")

        #expect(try Self.property("recent")["type"] as? String == "array")
        #expect(try Self.property("recent")["default"] as? [String] == ["a"])
        #expect(try Self.property("window")["type"] as? String == "object")
        #expect(try Self.property("window")["default"] as? [String: Int] == ["width": 800])

        // What JSON Schema cannot say is said in words, or left out.
        let name = try Self.property("name")
        #expect(name["minimum"] == nil)
        #expect(name["description"] as? String == "Who. Allows a through n.")
        #expect(try Self.property("anything").isEmpty)
        #expect(try Self.property("computed").keys.sorted() == ["type"])
        #expect(try Self.property("odd")["default"] == nil)
    }
}
