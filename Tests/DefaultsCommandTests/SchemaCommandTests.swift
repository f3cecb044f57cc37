import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// A program that declares its keys exports a schema (a real process, `DefaultsTestHelper
/// schema-export`), and the `defaults` command, another process, finds it through
/// `XDG_DATA_HOME` or `XDG_DATA_DIRS`, lists and describes its keys, and checks writes against it.
@Suite("the key schema and the defaults command", .mayBlock)
struct SchemaCommandTests {
    static let domain = "com.example.schema-app"
    /// The Swift type of the helper's `theme` key.
    static let paletteType = "DefaultsTestHelper.SchemaCommands.Palette"

    /// Runs the helper as the application: it declares its keys in `domain`'s file suite in the
    /// sandbox and exports the schema to the sandbox's `XDG_DATA_HOME`. Returns the schema's path.
    @discardableResult
    static func exportSchema(_ sandbox: CommandSandbox, release: Int = 1) throws -> String {
        let result = try ChildProcess.run(
            builtExecutable("DefaultsTestHelper"),
            ["schema-export", sandbox.path, domain, "--release", String(release)],
            environment: sandbox.environment)
        try #require(result.status == 0, "\(result)")
        return String(result.output.split(separator: "\n").first ?? "")
    }

    @Test("An app's exported schema lands in XDG_DATA_HOME, and `defaults keys` lists every key")
    func keysListed() throws {
        let sandbox = try CommandSandbox()
        let path = try Self.exportSchema(sandbox)
        #expect(path == sandbox.dataHome.appendingPathComponent("defaults/schemas/\(Self.domain).json").path)
        let schema = try DomainSchema.decode(from: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(schema.keys.map(\.name) == ["fontSize", "nickname", "showsToolbar", "theme", "volume"])
        #expect(schema.key(named: "nickname")?.iCloud == true)
        #expect(
            schema.key(named: "theme")?.allowedValues
                == .choices([.string("light"), .string("dark"), .string("system")]))

        #expect(try sandbox.run("write", Self.domain, "fontSize", "14").status == 0)
        let result = try sandbox.run("keys", Self.domain)
        #expect(result.status == 0, "\(result)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("fontSize (integer, Swift.Int) = 14, default 12, allows 8 through 72"))
        #expect(lines.contains("    The size of the text, in points."))
        #expect(
            lines.contains {
                $0.hasPrefix("nickname (string, Swift.Optional<Swift.String>), default none") && $0.hasSuffix("syncs")
            })
        #expect(lines.contains { $0.hasPrefix("showsToolbar (boolean, Swift.Bool), default 1") })
        #expect(lines.contains { $0.hasPrefix("theme (string, ") && $0.hasSuffix("allows one of light, dark, system") })
    }

    @Test("The README's `defaults-example` exports its schema: `defaults keys defaults-example` lists its keys")
    func exampleProgram() throws {
        let sandbox = try CommandSandbox()
        let run = try ChildProcess.run(builtExecutable("defaults-example"), environment: sandbox.environment)
        #expect(run.status == 0, "\(run)")
        let keys = try sandbox.run("keys", "defaults-example")
        #expect(keys.status == 0, "\(keys)")
        let lines = keys.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("fontSize (integer, Swift.Int), default 12, allows 8 through 72"), "\(keys.output)")
        #expect(lines.contains { $0.hasPrefix("launchCount (integer, Swift.Int) = 1, default 0") })
        #expect(lines.contains("    The colors of the window."))
        #expect(lines.contains("showsToolbar (boolean, Swift.Bool), default 1"), "\(keys.output)")
        let refused = try sandbox.run("write", "defaults-example", "theme", "purple")
        #expect(refused.status == 1)
        #expect(refused.error.contains("allows one of light, dark, system, and purple is not among them"))
    }

    /// Examples/' program, built into this build's folder by
    /// `swift build --package-path Examples --scratch-path .build` (as `.ci/run` does).
    static let pluginExample = builtExecutable("schema-plugin-example")

    @Test(
        "With DefaultsSchemaPlugin applied (Examples/), the schema lists a key the program never reads",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: pluginExample),
            "build it first: swift build --package-path Examples --scratch-path .build"))
    func pluginListsKeysNeverRead() throws {
        let sandbox = try CommandSandbox()
        let run = try ChildProcess.run(Self.pluginExample, environment: sandbox.environment)
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("schema: \(sandbox.dataHome.path)/defaults/schemas/schema-plugin-example.json"))
        let keys = try sandbox.run("keys", "schema-plugin-example")
        #expect(keys.status == 0, "\(keys)")
        let lines = keys.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("volume (integer, Swift.Int), default 5, allows 0 through 10"), "\(keys.output)")
        // Never read by the program: listed because the plugin found it in the sources.
        #expect(lines.contains("showsToolbar (boolean, Swift.Bool), default 1"), "\(keys.output)")
        #expect(lines.contains("    Whether the window shows its toolbar."))
    }

    @Test("Keys added in a later release reach the schema when that release runs, with no list kept")
    func keysAddedLater() throws {
        let sandbox = try CommandSandbox()
        try Self.exportSchema(sandbox, release: 1)
        #expect(try sandbox.run("describe", Self.domain, "recentSearches").status == 1)
        try Self.exportSchema(sandbox, release: 2)
        let result = try sandbox.run("describe", Self.domain, "recentSearches")
        #expect(result.status == 0, "\(result)")
        #expect(result.output.hasPrefix("Searched last.\ntype: array (Swift.Array<Swift.String>)\n"))
    }

    @Test("A write of the wrong type is refused with exit 1, naming both types, and nothing is written")
    func wrongTypeRefused() throws {
        let sandbox = try CommandSandbox()
        try Self.exportSchema(sandbox)
        #expect(try sandbox.run("write", Self.domain, "fontSize", "-int", "20").status == 0)
        let before = sandbox.bytes(Self.domain)
        let schemaPath = sandbox.dataHome.appendingPathComponent("defaults/schemas/\(Self.domain).json").path
        let refusals: [([String], String)] = [
            (["fontSize", "-string", "big"], "fontSize is an integer (Swift.Int), and big is a string"),
            (["fontSize", "big"], "fontSize is an integer (Swift.Int), and big is not"),
            (["fontSize", "100"], "fontSize (Swift.Int) allows 8 through 72, and 100 is not among them"),
            (["volume", "-bool", "yes"], "volume is a float (Swift.Double), and true is a boolean"),
            (["theme", "neon"], "allows one of light, dark, system, and neon is not among them"),
            (["showsToolbar", "maybe"], "showsToolbar is a boolean (Swift.Bool), and maybe is not"),
            (["fontSize", "-array-add", "1"], "fontSize is an integer (Swift.Int), and -array-add adds to an array"),
        ]
        for (arguments, reason) in refusals {
            let result = try sandbox.run(["write", Self.domain] + arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.error.contains(reason), "\(arguments): \(result.error)")
            #expect(result.error.contains("schema \(schemaPath)"), "\(result.error)")
            #expect(result.error.hasSuffix("Nothing was written.\n"), "\(result.error)")
            #expect(sandbox.bytes(Self.domain) == before, "\(arguments)")
        }
        // A whole domain replaced with a wrong value for a known key is refused too.
        let replaced = try sandbox.run("write", Self.domain, "{ fontSize = huge; other = 1; }")
        #expect(replaced.status == 1, "\(replaced)")
        #expect(sandbox.bytes(Self.domain) == before)
    }

    @Test("Values that fit are written, a bare value read as the key's type")
    func fittingWritesAccepted() throws {
        let sandbox = try CommandSandbox()
        try Self.exportSchema(sandbox)
        for arguments in [
            ["fontSize", "14"], ["volume", "1"], ["showsToolbar", "no"], ["theme", "dark"], ["nickname", "42"],
            ["unknownKey", "7"],
        ] {
            let result = try sandbox.run(["write", Self.domain] + arguments)
            #expect(result.status == 0, "\(arguments): \(result)")
        }
        let values = try sandbox.storedValues(Self.domain)
        #expect(values["fontSize"] as? Int == 14)
        #expect(values["volume"] as? Double == 1.0)
        #expect(values["showsToolbar"] as? Bool == false)
        #expect(values["theme"] as? String == "dark")
        // A string key takes the text as it is; a key the schema does not know, as property-list text.
        #expect(values["nickname"] as? String == "42")
        #expect(values["unknownKey"] as? String == "7")
        #expect(try sandbox.run("read-type", Self.domain, "volume").output == "Type is float\n")
    }

    @Test("`describe`, `range` and `writable` of the schema's keys")
    func describeRangeWritable() throws {
        let sandbox = try CommandSandbox()
        try Self.exportSchema(sandbox)
        #expect(try sandbox.run("range", Self.domain, "fontSize").output == "range integer 8 72\n")
        #expect(try sandbox.run("range", Self.domain, "theme").output == "choices string\nlight\ndark\nsystem\n")
        #expect(try sandbox.run("range", Self.domain, "showsToolbar").output == "type boolean\n")
        let describe = try sandbox.run("describe", Self.domain, "volume")
        #expect(
            describe.output.hasPrefix("How loud.\ntype: float (Swift.Double)\ndefault: 0.5\nallows: 0.0 through 1.0\n"))
        let missing = try sandbox.run("describe", Self.domain, "nothing")
        #expect(missing.status == 1)
        #expect(missing.error.contains("has no key nothing"))

        #expect(try sandbox.run("writable", Self.domain, "fontSize").output == "true\n")
        let administrator = sandbox.directory.appendingPathComponent("admin", isDirectory: true)
        let managed = administrator.appendingPathComponent("managed/\(Self.domain).plist")
        try FileManager.default.createDirectory(
            at: managed.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(
            "<plist version=\"1.0\"><dict><key>fontSize</key><integer>16</integer></dict></plist>".utf8
        ).write(to: managed)
        let writable = try sandbox.run(
            ["writable", Self.domain, "fontSize"], environment: ["XDG_CONFIG_DIRS": administrator.path])
        #expect(writable.output == "false: managed by the administrator in \(managed.path)\n", "\(writable)")
    }

    @Test("`reset` removes the user's value of a key, or of every key the schema declares, keeping the rest")
    func reset() throws {
        let sandbox = try CommandSandbox()
        try Self.exportSchema(sandbox)
        for arguments in [["fontSize", "14"], ["theme", "dark"], ["other", "-int", "1"]] {
            #expect(try sandbox.run(["write", Self.domain] + arguments).status == 0)
        }
        #expect(try sandbox.run("reset", Self.domain, "fontSize").status == 0)
        #expect(try sandbox.run("reset", Self.domain, "fontSize").status == 0)
        #expect(try sandbox.storedValues(Self.domain).keys.sorted() == ["other", "theme"])
        #expect(try sandbox.run("reset", Self.domain).status == 0)
        #expect(try sandbox.storedValues(Self.domain).keys.sorted() == ["other"])
        let noSchema = try sandbox.run("reset", "com.example.no-schema")
        #expect(noSchema.status == 1)
        #expect(noSchema.error.contains("has no schema"))
    }

    @Test("A schema installed under XDG_DATA_DIRS is found; the user's copy comes first")
    func systemSchemaFound() throws {
        let sandbox = try CommandSandbox()
        let exported = try Self.exportSchema(sandbox)
        let system = sandbox.systemData.appendingPathComponent("defaults/schemas", isDirectory: true)
        try FileManager.default.createDirectory(at: system, withIntermediateDirectories: true)
        var schema = try DomainSchema.decode(from: Data(contentsOf: URL(fileURLWithPath: exported)))
        try FileManager.default.moveItem(
            atPath: exported, toPath: system.appendingPathComponent("\(Self.domain).json").path)
        #expect(try sandbox.run("range", Self.domain, "fontSize").output == "range integer 8 72\n")
        // A user's copy that allows up to 96 wins over the system's.
        schema.keys = schema.keys.map { key in
            var key = key
            if key.name == "fontSize" { key.allowedValues = .range(lowerBound: .integer(8), upperBound: .integer(96)) }
            return key
        }
        try schema.encoded().write(to: URL(fileURLWithPath: exported))
        #expect(try sandbox.run("range", Self.domain, "fontSize").output == "range integer 8 96\n")
    }

    @Test("A domain with no schema behaves as before: any type written, `keys` says there is no schema")
    func domainWithoutSchema() throws {
        let sandbox = try CommandSandbox()
        try Self.exportSchema(sandbox)
        let other = "com.example.no-schema"
        #expect(try sandbox.run("write", other, "fontSize", "-string", "big").status == 0)
        #expect(try sandbox.run("write", other, "size", "14").status == 0)
        let values = try sandbox.storedValues(other)
        #expect(values["fontSize"] as? String == "big")
        #expect(values["size"] as? String == "14")
        let keys = try sandbox.run("keys", other)
        #expect(keys.status == 1)
        #expect(keys.error.contains("Domain \(other) has no schema"))
    }

    @Test("A damaged or newer schema is reported; a write then goes on unchecked, saying so")
    func damagedSchema() throws {
        let sandbox = try CommandSandbox()
        let path = try Self.exportSchema(sandbox)
        try Data(#"{"serializationVersion": 7, "domain": "x", "keys": []}"#.utf8).write(to: URL(fileURLWithPath: path))
        let keys = try sandbox.run("keys", Self.domain)
        #expect(keys.status == 1)
        #expect(keys.error.contains("its format is version 7"), "\(keys.error)")
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: path))
        let write = try sandbox.run("write", Self.domain, "fontSize", "-string", "big")
        #expect(write.status == 0, "\(write)")
        #expect(write.error.contains("is not a schema"), "\(write.error)")
        #expect(write.error.contains("the value is written unchecked"))
        #expect(try sandbox.storedValues(Self.domain)["fontSize"] as? String == "big")
    }
}

/// `defaults check`: an administrator's files checked against the schema before deployment.
@Suite("defaults check", .mayBlock)
struct SchemaCheckCommandTests {
    @Test("Good files pass; a wrong type or a value outside the range fails, naming file, key, expected and found")
    func checkAdministratorFiles() throws {
        let sandbox = try CommandSandbox()
        try SchemaCommandTests.exportSchema(sandbox)
        let domain = SchemaCommandTests.domain
        let administrator = sandbox.directory.appendingPathComponent("admin", isDirectory: true)
        let vendor = administrator.appendingPathComponent("\(domain).plist")
        let managed = administrator.appendingPathComponent("managed/\(domain).plist")
        try FileManager.default.createDirectory(
            at: managed.deletingLastPathComponent(), withIntermediateDirectories: true)
        func write(_ body: String, to file: URL) throws {
            try Data("<plist version=\"1.0\"><dict>\(body)</dict></plist>".utf8).write(to: file)
        }
        let environment = ["XDG_CONFIG_DIRS": administrator.path]
        try write("<key>fontSize</key><integer>14</integer><key>theme</key><string>dark</string>", to: vendor)
        try write("<key>volume</key><integer>1</integer><key>typo</key><true/>", to: managed)
        let good = try sandbox.run(["check", domain], environment: environment)
        #expect(good.status == 0, "\(good)")
        #expect(good.output == "2 administrator files checked, no problem\n")
        #expect(good.error.contains("\(managed.path): typo is not in the schema of \(domain)"))

        try write("<key>fontSize</key><string>big</string><key>theme</key><string>neon</string>", to: vendor)
        let bad = try sandbox.run(["check"], environment: environment)
        #expect(bad.status == 1, "\(bad)")
        #expect(
            bad.output.split(separator: "\n").map(String.init) == [
                "\(vendor.path): fontSize is an integer (Swift.Int), and big is a string",
                "\(vendor.path): theme (\(SchemaCommandTests.paletteType)) allows one of light, dark, system, and neon is not among them",
            ])
        #expect(bad.error.hasSuffix("2 values do not fit the schema\n"), "\(bad.error)")
    }
}
