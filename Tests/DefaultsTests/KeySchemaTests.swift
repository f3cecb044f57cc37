import Defaults
import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// Keys that carry their meaning (description, range, choices) into the registry and the schema.
@Suite("key schema")
struct KeySchemaTests {
    enum Mode: String, Defaults.Serializable {
        case fast, careful, off
    }

    struct Size: Codable, Defaults.Serializable, Equatable {
        var width: Int
    }

    /// The schema is made when asked for, not when a key is declared (it would cost every
    /// program's start), and the registry holds no key alive: a key already released is still
    /// listed, with what its declaration knows.
    @Test func aKeyThatIsGone() {
        let suite = InMemorySuite(name: "schema-\(UUID().uuidString)")
        _ = Defaults.Key<Int>("zoom", default: 2, suite: suite, description: "Zoom.")
        let key = Defaults.schema(of: suite).key(named: "zoom")
        #expect(key?.type == .integer)
        #expect(key?.swiftType == "Swift.Int")
        #expect(key?.description == "Zoom.")
        #expect(key?.defaultValue == nil)
    }

    @Test("A described key's schema: type, Swift type, default in stored form, description, range, sync")
    func describedKeys() throws {
        let suite = InMemorySuite(name: "schema-\(UUID().uuidString)")
        let fontSize = Defaults.Key<Int>(
            "fontSize", default: 12, suite: suite, description: "Text size.", range: 8...72)
        let mode = Defaults.Key<Mode>(
            "mode", default: .careful, suite: suite, iCloud: true, choices: [.fast, .careful])
        // Kept, as an app's `static let`s are: a key that is gone tells less (`aKeyThatIsGone`).
        let size = Defaults.Key<Size>("size", default: Size(width: 3), suite: suite, description: "Size.")
        let seen = Defaults.Key<Date?>("seen", suite: suite)
        let ratio = Defaults.Key<Double>("ratio", suite: suite) { 0.5 }
        defer { withExtendedLifetime((size, seen, ratio)) {} }
        let schema = Defaults.schema(of: suite)
        #expect(schema.domain == suite.name)
        #expect(schema.serializationVersion == 0)
        #expect(schema.keys.map(\.name) == ["fontSize", "mode", "ratio", "seen", "size"])
        #expect(
            schema.key(named: "fontSize")
                == KeySchema(
                    name: "fontSize", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(12),
                    description: "Text size.", allowedValues: .range(lowerBound: .integer(8), upperBound: .integer(72)))
        )
        #expect(schema.key(named: "mode")?.allowedValues == .choices([.string("fast"), .string("careful")]))
        #expect(schema.key(named: "mode")?.iCloud == true)
        #expect(schema.key(named: "size")?.type == .string)
        #expect(schema.key(named: "size")?.defaultValue == .string(#"{"width":3}"#))
        #expect(schema.key(named: "seen")?.type == .date)
        #expect(schema.key(named: "seen")?.defaultValue == nil)
        #expect(schema.key(named: "ratio")?.isDefaultDynamic == true)
        #expect(schema.key(named: "ratio")?.type == .real)
        // The meaning changes nothing of what a key reads and writes (a value outside the range is
        // read, and logged).
        Defaults[fontSize] = 100
        #expect(Defaults[fontSize] == 100)
        #expect(Defaults[mode] == .careful)
        #expect(!Defaults.KeyRegistry.defaultValueProblems.contains { $0.declaration.suiteName == suite.name })
    }

    @Test("A default outside its own range or choices is reported when declared, never trapped")
    func defaultOutsideAllowedValues() throws {
        let suite = InMemorySuite(name: "schema-bad-\(UUID().uuidString)")
        let key = Defaults.Key<Int>("fontSize", default: 100, suite: suite, range: 8...72)
        _ = Defaults.Key<Mode>("mode", default: .off, suite: suite, choices: [.fast, .careful])
        let problems = Defaults.KeyRegistry.defaultValueProblems.filter { $0.declaration.suiteName == suite.name }
        #expect(problems.map(\.declaration.name) == ["fontSize", "mode"])
        #expect(problems.first?.description.contains("The default value 100 of Key<Swift.Int>(\"fontSize\")") == true)
        #expect(problems.first?.description.contains("8...72") == true)
        #expect(CapturedLogs.lines.contains { $0.contains("The default value 100") && $0.contains(suite.name) })
        #expect(Defaults[key] == 100)
    }

    @Test("A stored value outside a key's range or choices is read as it is and told once, in the command's words")
    func storedValueOutsideAllowedValues() throws {
        let suite = InMemorySuite(name: "schema-stored-\(UUID().uuidString)")
        // Written before the keys are declared, as another program or an older version would.
        suite.set(100, forKey: "fontSize")
        suite.set("off", forKey: "mode")
        let fontSize = Defaults.Key<Int>("fontSize", default: 12, suite: suite, range: 8...72)
        let mode = Defaults.Key<Mode>("mode", default: .fast, suite: suite, choices: [.fast, .careful])
        func told(_ words: String) -> Int {
            CapturedLogs.lines.filter { $0.contains(words) && $0.contains(suite.name) }.count
        }
        // The words `defaults write` refuses such a value with (SchemaCommandTests).
        let outOfRange = "fontSize (Swift.Int) allows 8 through 72, and 100 is not among them"

        #expect(Defaults[fontSize] == 100)
        #expect(Defaults[mode] == .off)
        #expect(told(outOfRange) == 1)
        #expect(told("allows one of fast, careful, and off is not among them") == 1)

        // Read again, and written again with the same value: told once.
        suite.set(100, forKey: "fontSize")
        #expect(Defaults[fontSize] == 100)
        #expect(told(outOfRange) == 1)
        // An allowed value is told of never; another value outside the range, once.
        Defaults[fontSize] = 50
        #expect(Defaults[fontSize] == 50)
        suite.set(90, forKey: "fontSize")
        #expect(Defaults[fontSize] == 90)
        #expect(told("fontSize (Swift.Int) allows 8 through 72, and 90 is not among them") == 1)
        #expect(told("allows 8 through 72, and 50") == 0)

        // A suite filled with ever new values outside the range: at most 100 are told of per key.
        for value in 1_000..<1_150 {
            suite.set(value, forKey: "fontSize")
            #expect(Defaults[fontSize] == value)
        }
        #expect(told("fontSize (Swift.Int) allows 8 through 72, and ") == 100)

        // A default outside the range is reported when declared, not again as a stored value.
        let zoom = Defaults.Key<Int>("zoom", default: 100, suite: suite, range: 8...72)
        #expect(Defaults[zoom] == 100)
        #expect(told("zoom (Swift.Int) allows") == 0)
    }

    @Test("Every kind of property-list value round-trips through the schema's JSON")
    func valuesRoundTrip() throws {
        let values: [SchemaValue] = [
            .string("a \"quoted\" / text"), .integer(-7), .integer(.max), .unsignedInteger(.max), .real(0.1),
            .real(.infinity), .real(-.infinity), .boolean(false),
            .date(Date(timeIntervalSince1970: 1_715_000_000.123_456)),
            .data(Data([0, 1, 255])), .array([.integer(1), .array([])]),
            .dictionary(["nested": .dictionary(["x": .boolean(true)])]),
        ]
        let key = KeySchema(
            name: "k", type: .array, swiftType: "T", defaultValue: .array(values),
            allowedValues: .choices(values))
        let schema = DomainSchema(domain: "d", keys: [key])
        let decoded = try DomainSchema.decode(from: schema.encoded())
        #expect(decoded == schema)
        let nan = try DomainSchema.decode(
            from: DomainSchema(
                domain: "d",
                keys: [KeySchema(name: "n", type: .real, swiftType: "Swift.Double", defaultValue: .real(.nan))]
            ).encoded())
        guard case .real(let real)? = nan.keys.first?.defaultValue else {
            Issue.record("no float")
            return
        }
        #expect(real.isNaN)
    }

    @Test("A schema of a newer format, or not a schema, is refused with a clear error")
    func refusedSchemas() throws {
        #expect(throws: DomainSchema.UnsupportedVersion.self) {
            try DomainSchema.decode(from: Data(#"{"serializationVersion": 1, "domain": "d", "keys": []}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try DomainSchema.decode(
                from: Data(#"{"serializationVersion": 0, "domain": "d", "keys": [{"name": 1}]}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try DomainSchema.decode(
                from: Data(
                    #"{"serializationVersion": 0, "domain": "d", "keys": [{"name": "k", "swiftType": "T", "isDefaultDynamic": false, "iCloud": false, "defaultValue": {"integer": 1, "string": "x"}}]}"#
                        .utf8))
        }
    }

    @Test("A value's fit: its type (an integer fits a float key), a range, choices")
    func valueFit() {
        let size = KeySchema(
            name: "size", type: .real, swiftType: "Swift.Double", defaultValue: .real(1),
            allowedValues: .range(lowerBound: .real(0.5), upperBound: .integer(4)))
        #expect(size.problem(with: .integer(2)) == nil)
        #expect(size.problem(with: .real(4)) == nil)
        #expect(size.problem(with: .real(4.5)) != nil)
        #expect(size.problem(with: .string("2")) == "size is a float (Swift.Double), and 2 is a string")
        let big = KeySchema(
            name: "n", type: .integer, swiftType: "Swift.UInt64", defaultValue: nil,
            allowedValues: .range(lowerBound: .integer(-1), upperBound: .unsignedInteger(.max)))
        #expect(big.problem(with: .unsignedInteger(.max - 1)) == nil)
        #expect(big.problem(with: .integer(-2)) != nil)
    }

    @Test("exportSchema writes <suite>.json in the directory, and rewrites it only when it changes")
    func exportWritesOnlyChanges() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("schema-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let suite = InMemorySuite(name: "com.example.export-\(UUID().uuidString)")
        _ = Defaults.Key<Int>("a", default: 1, suite: suite, description: "A.")
        let url = try Defaults.exportSchema(of: suite, to: directory)
        #expect(url == directory.appendingPathComponent("\(suite.name).json"))
        let inode = try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int
        try Defaults.exportSchema(of: suite, to: directory)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int == inode)
        _ = Defaults.Key<String>("b", default: "x", suite: suite)
        try Defaults.exportSchema(of: suite, to: directory)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int != inode)
        #expect(try DomainSchema.decode(from: Data(contentsOf: url)).keys.map(\.name) == ["a", "b"])
        let unnamed = InMemorySuite(name: "../escape")
        #expect(throws: DefaultsError.self) { try Defaults.exportSchema(of: unnamed, to: directory) }
    }

    @Test("The schema directories follow XDG: XDG_DATA_HOME, then XDG_DATA_DIRS, with their defaults")
    func locations() {
        let set = SchemaLocations.candidateFiles(
            forDomain: "com.example.app",
            environment: [
                "XDG_DATA_HOME": "/data/home", "XDG_DATA_DIRS": "/opt/share:relative:/usr/share", "HOME": "/h",
            ])
        #expect(
            set.map(\.path) == [
                "/data/home/defaults/schemas/com.example.app.json", "/opt/share/defaults/schemas/com.example.app.json",
                "/usr/share/defaults/schemas/com.example.app.json",
            ])
        let unset = SchemaLocations.searchDirectories(environment: ["HOME": "/h", "XDG_DATA_HOME": "relative"])
        #expect(
            unset.map(\.path) == [
                "/h/.local/share/defaults/schemas", "/usr/local/share/defaults/schemas", "/usr/share/defaults/schemas",
            ])
        #expect(SchemaLocations.fileName(forDomain: "a/b") == nil)
        #expect(SchemaLocations.fileName(forDomain: "..") == nil)
    }
}
