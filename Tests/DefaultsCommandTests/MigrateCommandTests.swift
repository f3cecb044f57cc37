import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// `defaults migrate`: values under the former names a program's schema lists (release 3 of the
/// helper's application: `fontSize` was `textSize`, `accentColor` was `tint`, and `color` before
/// it) move to the keys' names, and `read` and `explain` of a former name say where it went.
@Suite("defaults migrate and former names", .mayBlock)
struct MigrateCommandTests {
    static let domain = SchemaCommandTests.domain

    /// A sandbox whose domain has the schema of release 3 and, as its file, `values`, written as an
    /// older version of the program left them.
    static func sandbox(storing values: [String: Any]?) throws -> CommandSandbox {
        let sandbox = try CommandSandbox()
        // Exported before the file exists, so that the program migrates nothing itself.
        try SchemaCommandTests.exportSchema(sandbox, release: 3)
        try? FileManager.default.removeItem(at: sandbox.fileURL(domain))
        if let values {
            try sandbox.store(values, as: domain)
        }
        return sandbox
    }

    @Test("Values under former names move to their keys as they are, once; --dry-run changes no byte")
    func moves() throws {
        let sandbox = try Self.sandbox(storing: ["textSize": 14, "color": "red", "other": 1])
        let before = try #require(sandbox.bytes(Self.domain))

        let dryRun = try sandbox.run("migrate", Self.domain, "--dry-run")
        #expect(dryRun.status == 0, "\(dryRun)")
        #expect(dryRun.output == "color -> accentColor\ntextSize -> fontSize\n")
        #expect(sandbox.bytes(Self.domain) == before)

        let migrated = try sandbox.run("migrate", Self.domain)
        #expect(migrated.status == 0, "\(migrated)")
        #expect(migrated.output == dryRun.output)
        let values = try sandbox.storedValues(Self.domain)
        #expect(values.keys.sorted() == ["accentColor", "fontSize", "other"])
        #expect(values["fontSize"] as? Int == 14)
        #expect(values["accentColor"] as? String == "red")
        #expect(try sandbox.run("read", Self.domain, "fontSize").output == "14\n")

        // Once: nothing is left to move, and the file is not written again.
        let after = try #require(sandbox.bytes(Self.domain))
        let again = try sandbox.run("migrate", Self.domain)
        #expect(again.status == 0, "\(again)")
        #expect(again.output == "nothing to migrate\n")
        #expect(sandbox.bytes(Self.domain) == after)
    }

    @Test("A value of another type than its key's stays under its former name, for the program to convert")
    func valuesOfAnotherTypeStay() throws {
        let sandbox = try Self.sandbox(storing: ["textSize": "large", "tint": ["r": 1]])
        let result = try sandbox.run("migrate", Self.domain)
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("textSize kept"), "\(result.output)")
        let values = try sandbox.storedValues(Self.domain)
        // Moved as they are, they would read as the keys' defaults, and no conversion would run.
        #expect(values["textSize"] as? String == "large")
        #expect((values["tint"] as? [String: Any])?["r"] as? Int == 1)
        #expect(values["fontSize"] == nil && values["accentColor"] == nil)
    }

    /// An integer fits a floating-point key as it is, but the program converts `loudness` with a
    /// closure of its own (a percentage, refused outside 0...100): moved as it is, -5 would be read
    /// as a volume the program never allows.
    @Test("A former name the program converts with its own closure stays, even with a value of the key's type")
    func valuesTheProgramConvertsStay() throws {
        let sandbox = try Self.sandbox(storing: ["loudness": -5, "textSize": 14])
        let schema = try DomainSchema.decode(
            from: Data(
                contentsOf: sandbox.dataHome.appendingPathComponent("defaults/schemas/\(Self.domain).json")))
        let volume = try #require(schema.keys.first { $0.name == "volume" })
        #expect(volume.formerNames == ["loudness"])
        #expect(volume.formerNamesConvertedByProgram == ["loudness"])
        #expect(schema.keys.first { $0.name == "fontSize" }?.formerNamesConvertedByProgram == nil)

        let result = try sandbox.run("migrate", Self.domain)
        #expect(result.status == 0, "\(result)")
        #expect(
            result.output == "textSize -> fontSize\nloudness kept (the program converts it), not moved to volume\n")
        let values = try sandbox.storedValues(Self.domain)
        #expect(values["loudness"] as? Int == -5)
        #expect(values["volume"] == nil)
    }

    @Test("The new name wins, and only the newest former name moves: every other value stays, printed as kept")
    func kept() throws {
        let stored: [String: Any] = ["fontSize": 20, "textSize": 14, "tint": "green", "color": "red"]
        let sandbox = try Self.sandbox(storing: stored)
        let before = try #require(sandbox.bytes(Self.domain))
        let expected = """
            tint -> accentColor
            color kept (a newer name's value moves to accentColor), not moved to accentColor
            textSize kept (fontSize has a value), not moved to fontSize

            """
        let dryRun = try sandbox.run("migrate", Self.domain, "--dry-run")
        #expect(dryRun.status == 0, "\(dryRun)")
        #expect(dryRun.output == expected)
        #expect(sandbox.bytes(Self.domain) == before)

        let migrated = try sandbox.run("migrate", Self.domain)
        #expect(migrated.output == expected, "\(migrated)")
        let values = try sandbox.storedValues(Self.domain)
        #expect(values.keys.sorted() == ["accentColor", "color", "fontSize", "textSize"])
        #expect(values["fontSize"] as? Int == 20)
        #expect(values["textSize"] as? Int == 14)
        #expect(values["accentColor"] as? String == "green")
        #expect(values["color"] as? String == "red")

        // What stays is printed each time, and never written again.
        let after = try #require(sandbox.bytes(Self.domain))
        let again = try sandbox.run("migrate", Self.domain)
        #expect(again.output.hasPrefix("color kept"), "\(again)")
        #expect(sandbox.bytes(Self.domain) == after)
    }

    @Test("A former name that is a key of the same schema keeps its value: it is that key's")
    func formerNameOfAnotherKey() throws {
        let sandbox = try CommandSandbox()
        let schema = DomainSchema(
            domain: "com.example.swap",
            keys: [
                KeySchema(name: "a", type: .integer, swiftType: "Swift.Int", defaultValue: nil, formerNames: ["b"]),
                KeySchema(name: "b", type: .integer, swiftType: "Swift.Int", defaultValue: nil),
            ])
        let schemas = sandbox.dataHome.appendingPathComponent("defaults/schemas", isDirectory: true)
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        try JSONEncoder().encode(schema).write(to: schemas.appendingPathComponent("com.example.swap.json"))
        try sandbox.store(["b": 1], as: "com.example.swap")
        let before = sandbox.bytes("com.example.swap")
        let result = try sandbox.run("migrate", "com.example.swap")
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "b kept (b is a key of its own), not moved to a\n")
        #expect(sandbox.bytes("com.example.swap") == before)
    }

    @Test("Nothing to migrate: a domain with no file stays without one; a domain with no schema fails")
    func nothingToMigrate() throws {
        let sandbox = try Self.sandbox(storing: nil)
        let result = try sandbox.run("migrate", Self.domain)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "nothing to migrate\n")
        #expect(sandbox.bytes(Self.domain) == nil)

        try sandbox.store(["textSize": 14], as: "com.example.unknown")
        let before = sandbox.bytes("com.example.unknown")
        let noSchema = try sandbox.run("migrate", "com.example.unknown")
        #expect(noSchema.status == 1)
        #expect(noSchema.error.contains("has no schema"), "\(noSchema.error)")
        #expect(sandbox.bytes("com.example.unknown") == before)

        let usage = try sandbox.run("migrate", Self.domain, "fontSize")
        #expect(usage.status == 64, "\(usage)")
    }

    @Test("A damaged file fails the command and is left exactly as it was")
    func damagedFile() throws {
        let sandbox = try Self.sandbox(storing: nil)
        let damaged = Data("<?xml version=\"1.0\"?><plist><dict><key>textSize".utf8)
        try damaged.write(to: sandbox.fileURL(Self.domain))
        let result = try sandbox.run("migrate", Self.domain)
        #expect(result.status == 1, "\(result)")
        #expect(result.error.contains("is not a valid property list"), "\(result.error)")
        #expect(sandbox.bytes(Self.domain) == damaged)
        #expect(try sandbox.fileNames().filter { $0.contains("corrupt") }.isEmpty)
    }

    @Test("`read` and `explain` of a former name that holds nothing say which key it became")
    func readFormerName() throws {
        let sandbox = try Self.sandbox(storing: ["fontSize": 14])
        for command in ["read", "explain"] {
            let result = try sandbox.run(command, Self.domain, "textSize")
            #expect(result.status == 1, "\(command): \(result)")
            #expect(
                result.error.contains(
                    "The key textSize of \(Self.domain) was renamed to fontSize (read that key)"),
                "\(command): \(result.error)")
            let older = try sandbox.run(command, Self.domain, "color")
            #expect(older.status == 1)
            #expect(
                older.error.contains("The key color of \(Self.domain) was renamed to accentColor"), "\(older.error)")

            // A name no key ever had fails as before, without a word of renaming.
            let unknown = try sandbox.run(command, Self.domain, "nothing")
            #expect(unknown.status == 1)
            #expect(!unknown.error.contains("renamed"), "\(unknown.error)")
        }
        #expect(try sandbox.run("read", Self.domain, "textSize").error.hasPrefix("The domain/default pair of"))
    }
}
