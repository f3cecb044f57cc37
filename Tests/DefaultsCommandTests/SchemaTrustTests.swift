import DefaultsSchema
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Which schema files the `defaults` command believes: in `XDG_DATA_HOME` the user's (or root's),
/// in a directory of `XDG_DATA_DIRS` root's (or that directory's owner's) and writable by no one
/// else, as the administrator's files are judged. Any other is passed over with a warning naming
/// it and why, and the next trusted schema, or none, decides what the command says and refuses.
@Suite("schemas nobody vouches for", .mayBlock)
struct SchemaTrustTests {
    static let domain = "com.example.trust"

    /// A schema in which `fontSize` is `type`, and allows at most `maximum` when it is an integer.
    static func schema(fontSize type: StoredType, maximum: Int = 72) throws -> Data {
        let allowed: AllowedValues? =
            type == .integer ? .range(lowerBound: .integer(8), upperBound: .integer(maximum)) : nil
        let key = KeySchema(
            name: "fontSize", type: type, swiftType: type == .integer ? "Swift.Int" : "Swift.String",
            defaultValue: type == .integer ? .integer(12) : .string("twelve"), allowedValues: allowed)
        return try DomainSchema(domain: domain, keys: [key]).encoded()
    }

    /// Writes `data` as `domain`'s schema under `base` (`<base>/defaults/schemas/<domain>.json`).
    @discardableResult
    static func plant(_ data: Data, under base: URL, domain: String = domain) throws -> URL {
        let directory = base.appendingPathComponent(SchemaLocations.subdirectory, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("\(domain).json")
        try data.write(to: file)
        return file
    }

    static func chmod(_ url: URL, _ mode: mode_t) throws {
        try #require(Glibc.chmod(url.path, mode) == 0, "chmod \(url.path)")
    }

    static func chown(_ url: URL, _ owner: uid_t) throws {
        try #require(Glibc.chown(url.path, owner, gid_t.max) == 0, "chown \(url.path)")
    }

    /// A sandbox whose `XDG_DATA_DIRS` lists `hostile` (in which a schema declares `fontSize` a
    /// string: any value written) before `trusted` (an integer of 8 through 72), and the
    /// environment that says so.
    struct TwoSystemDirectories {
        let sandbox: CommandSandbox
        let hostile: URL
        let trusted: URL
        let hostileFile: URL
        var environment: [String: String] { ["XDG_DATA_DIRS": "\(hostile.path):\(trusted.path)"] }

        init() throws {
            sandbox = try CommandSandbox()
            hostile = sandbox.directory.appendingPathComponent("hostile-data", isDirectory: true)
            trusted = sandbox.directory.appendingPathComponent("trusted-data", isDirectory: true)
            hostileFile = try plant(schema(fontSize: .string), under: hostile)
            try plant(schema(fontSize: .integer), under: trusted)
        }

        func run(_ arguments: String...) throws -> ChildProcess.Result {
            try sandbox.run(arguments, environment: environment)
        }

        /// The command judges by the trusted schema: `describe` shows it, a string is refused and
        /// an integer in range written, and each command warns once of `passedOver` for `reason`.
        func expectPassedOver(
            _ passedOver: URL, because reason: String, sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let warning = "warning: passed over the schema \(passedOver.path): \(reason)\n"
            let describe = try run("describe", SchemaTrustTests.domain, "fontSize")
            #expect(describe.status == 0, "\(describe)", sourceLocation: sourceLocation)
            let typeLine = "type: integer (Swift.Int)"
            #expect(describe.output.contains(typeLine), "\(describe)", sourceLocation: sourceLocation)
            #expect(describe.error == warning, "\(describe)", sourceLocation: sourceLocation)
            let refused = try run("write", SchemaTrustTests.domain, "fontSize", "big")
            #expect(refused.status == 1, "\(refused)", sourceLocation: sourceLocation)
            #expect(refused.error.hasPrefix(warning), "\(refused)", sourceLocation: sourceLocation)
            #expect(refused.error.contains("Refused to write fontSize"), "\(refused)", sourceLocation: sourceLocation)
            let written = try run("write", SchemaTrustTests.domain, "fontSize", "14")
            #expect(written.status == 0 && written.error == warning, "\(written)", sourceLocation: sourceLocation)
            let stored = try sandbox.storedValues(SchemaTrustTests.domain)["fontSize"]
            #expect(stored as? Int == 14, sourceLocation: sourceLocation)
        }
    }

    @Test("Both system schemas trusted: the first decides (what the cases below pass over)")
    func firstTrustedSystemSchemaDecides() throws {
        let setup = try TwoSystemDirectories()
        let describe = try setup.run("describe", Self.domain, "fontSize")
        #expect(describe.output.contains("type: string (Swift.String)") && describe.error.isEmpty, "\(describe)")
        #expect(try setup.run("write", Self.domain, "fontSize", "big").status == 0)
    }

    @Test("A system schema writable by others (666) or by its group (664) is passed over")
    func writableSystemSchema() throws {
        let setup = try TwoSystemDirectories()
        for mode: mode_t in [0o666, 0o664] {
            try Self.chmod(setup.hostileFile, mode)
            try setup.expectPassedOver(setup.hostileFile, because: "it is writable by users other than its owner")
        }
    }

    @Test(
        "A system schema in a directory others may write is passed over, sticky or not, as sudo judges",
        arguments: [0o777, 0o1777, 0o775] as [mode_t])
    func systemSchemaInWritableDirectory(mode: mode_t) throws {
        let setup = try TwoSystemDirectories()
        let schemas = setup.hostileFile.deletingLastPathComponent()
        try Self.chmod(schemas, mode)
        try setup.expectPassedOver(
            setup.hostileFile,
            because: "the directory \(schemas.path) cannot be trusted: it is writable by users other than its owner")
    }

    @Test("A system schema under a base directory of XDG_DATA_DIRS that others may write is passed over")
    func writableBaseDirectory() throws {
        let setup = try TwoSystemDirectories()
        try Self.chmod(setup.hostile, 0o777)
        try setup.expectPassedOver(
            setup.hostileFile,
            because: "the directory \(setup.hostile.path) cannot be trusted: "
                + "it is writable by users other than its owner")
    }

    @Test("A system schema that is a symbolic link is passed over, as an administrator's file is")
    func linkedSystemSchema() throws {
        let setup = try TwoSystemDirectories()
        let elsewhere = setup.sandbox.directory.appendingPathComponent("elsewhere.json")
        try FileManager.default.moveItem(at: setup.hostileFile, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: setup.hostileFile, withDestinationURL: elsewhere)
        let directory = setup.hostileFile.deletingLastPathComponent().path
        try setup.expectPassedOver(
            setup.hostileFile, because: "it is a symbolic link, which a schema of \(directory) may not be")
    }

    @Test(
        "A system schema of another user's in a directory of root's is passed over",
        .enabled(if: geteuid() == 0, "needs root, to give a file to another user"))
    func systemSchemaOfAnotherUser() throws {
        let setup = try TwoSystemDirectories()
        try Self.chown(setup.hostileFile, 65534)
        try setup.expectPassedOver(
            setup.hostileFile, because: "it belongs to uid 65534, neither root nor the owner of its directory")
    }

    @Test(
        "A system directory of another user's holding a schema of root's: that user may swap it, so it is passed over",
        .enabled(if: geteuid() == 0, "needs root, to give a directory to another user"))
    func systemSchemaInAnotherUsersDirectory() throws {
        let setup = try TwoSystemDirectories()
        let schemas = setup.hostileFile.deletingLastPathComponent()
        try Self.chown(schemas, 65534)
        try setup.expectPassedOver(
            setup.hostileFile,
            because: "the directory \(schemas.path) cannot be trusted: it belongs to uid 65534, "
                + "neither root nor the owner of its directory")
    }

    @Test(
        "A schema of another user's in XDG_DATA_HOME, or in a directory of theirs there, is passed over",
        .enabled(if: geteuid() == 0, "needs root, to give a file to another user"))
    func userSchemaOfAnotherUser() throws {
        // The user's schema comes first: passed over, the trusted system schema decides.
        let setup = try TwoSystemDirectories()
        try FileManager.default.removeItem(at: setup.hostileFile)
        let userFile = try Self.plant(Self.schema(fontSize: .string), under: setup.sandbox.dataHome)
        try Self.chown(userFile, 65534)
        try setup.expectPassedOver(userFile, because: "it belongs to another user (uid 65534)")

        let fresh = try TwoSystemDirectories()
        try FileManager.default.removeItem(at: fresh.hostileFile)
        let file = try Self.plant(Self.schema(fontSize: .string), under: fresh.sandbox.dataHome)
        let schemas = file.deletingLastPathComponent()
        try Self.chown(schemas, 65534)
        try fresh.expectPassedOver(
            file, because: "the directory \(schemas.path) cannot be trusted: it belongs to another user (uid 65534)")
    }

    @Test("The user's own schema is believed, also through the user's own link, and comes first")
    func usersOwnSchema() throws {
        let setup = try TwoSystemDirectories()
        let kept = setup.sandbox.directory.appendingPathComponent("kept.json")
        try Self.schema(fontSize: .integer, maximum: 96).write(to: kept)
        let file = try Self.plant(Data(), under: setup.sandbox.dataHome)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: kept)
        let range = try setup.run("range", Self.domain, "fontSize")
        #expect(range.output == "range integer 8 96\n" && range.error.isEmpty, "\(range)")
    }

    @Test("With no trusted schema left, the domain has none: any value is written, `keys` says why")
    func noTrustedSchemaLeft() throws {
        let sandbox = try CommandSandbox()
        let file = try Self.plant(Self.schema(fontSize: .integer), under: sandbox.systemData)
        try Self.chmod(file, 0o666)
        let warning = "warning: passed over the schema \(file.path): it is writable by users other than its owner\n"
        let write = try sandbox.run("write", Self.domain, "fontSize", "big")
        #expect(write.status == 0 && write.error == warning, "\(write)")
        #expect(try sandbox.storedValues(Self.domain)["fontSize"] as? String == "big")
        let keys = try sandbox.run("keys", Self.domain)
        #expect(keys.status == 1, "\(keys)")
        #expect(keys.error.hasPrefix(warning), "\(keys)")
        #expect(keys.error.contains("holds a trusted \(Self.domain).json"), "\(keys)")
        // `check` of every domain leaves it out (the warning says why); named, it has no schema.
        let checkAll = try sandbox.run("check")
        #expect(checkAll.status == 0 && checkAll.error == warning, "\(checkAll)")
        let check = try sandbox.run("check", Self.domain)
        #expect(check.status == 1 && check.error.contains("has no schema"), "\(check)")
    }

    @Test("Well-formed but hostile schemas are refused as not schemas, never a crash")
    func hostileJSON() throws {
        let sandbox = try CommandSandbox()
        let key = #""name":"k","swiftType":"Swift.Int","isDefaultDynamic":false,"iCloud":false"#
        func schema(_ keys: String) -> Data {
            Data(#"{"serializationVersion":0,"domain":"\#(Self.domain)","keys":[\#(keys)]}"#.utf8)
        }
        let deep = String(repeating: #"{"array":["#, count: 20_000) + String(repeating: "]}", count: 20_000)
        for hostile in [
            schema(#"{\#(key),"type":"integer","defaultValue":{"integer":1e400}}"#),
            schema(#"{\#(key),"type":"integer","defaultValue":{"integer":123456789012345678901234567890}}"#),
            schema(#"{\#(key),"defaultValue":\#(deep)}"#),
        ] {
            try Self.plant(hostile, under: sandbox.dataHome)
            let keys = try sandbox.run("keys", Self.domain)
            #expect(keys.status == 1, "\(keys)")
            #expect(keys.error.contains("could not be read: it is not a schema"), "\(keys.error.prefix(300))")
        }
        // A duplicate member and a NUL in a key's name are JSON: read as JSONDecoder reads them.
        for readable in [
            schema(#"{\#(key),"type":"integer","type":"string"}"#),
            schema(#"{"name":"a\u0000b","swiftType":"Swift.Int","isDefaultDynamic":false,"iCloud":false}"#),
        ] {
            try Self.plant(readable, under: sandbox.dataHome)
            let keys = try sandbox.run("keys", Self.domain)
            #expect(keys.status == 0 || keys.error.contains("it is not a schema"), "\(keys)")
        }
    }
}

/// A schema that contradicts itself (a default, bound or choice not of its key's type, a default
/// outside its own choices): `check` reports each contradiction and fails; `keys`, `describe` and
/// `explain` never show such a default as what a program reads; `write` judges by the type.
@Suite("schemas that contradict themselves", .mayBlock)
struct SchemaContradictionTests {
    static let domain = "com.example.contradiction"

    /// Plants the contradicting schema in the sandbox's `XDG_DATA_HOME`; returns its path.
    @discardableResult
    static func plantSchema(_ sandbox: CommandSandbox) throws -> String {
        let keys = [
            KeySchema(name: "count", type: .integer, swiftType: "Swift.Int", defaultValue: .string("twelve")),
            KeySchema(
                name: "size", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(5),
                allowedValues: .range(lowerBound: .string("a"), upperBound: .string("z"))),
            KeySchema(
                name: "level", type: .string, swiftType: "App.Level", defaultValue: nil,
                allowedValues: .choices([.string("low"), .integer(2)])),
            KeySchema(
                name: "mode", type: .string, swiftType: "App.Mode", defaultValue: .string("medium"),
                allowedValues: .choices([.string("fast"), .string("slow")])),
            KeySchema(name: "fine", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(1)),
        ]
        return try SchemaTrustTests.plant(
            DomainSchema(domain: domain, keys: keys).encoded(), under: sandbox.dataHome, domain: domain
        ).path
    }

    @Test("`check` names each contradiction, and fails")
    func checkReportsEach() throws {
        let sandbox = try CommandSandbox()
        let path = try Self.plantSchema(sandbox)
        let check = try sandbox.run("check", Self.domain)
        #expect(check.status == 1, "\(check)")
        #expect(
            check.output.split(separator: "\n").map(String.init) == [
                "\(path): the default of count does not fit it: count is an integer (Swift.Int), "
                    + "and twelve is a string",
                "\(path): a choice of level does not fit it: level is a string (App.Level), and 2 is an integer",
                "\(path): the default of mode does not fit it: mode (App.Mode) allows one of fast, slow, "
                    + "and medium is not among them",
                "\(path): the lower bound of size's range does not fit it: size is an integer (Swift.Int), "
                    + "and a is a string",
                "\(path): the upper bound of size's range does not fit it: size is an integer (Swift.Int), "
                    + "and z is a string",
            ])
        #expect(check.error.hasSuffix("5 contradictions in the schema\n"), "\(check)")
    }

    @Test("`keys` and `describe` mark a default that does not fit its key")
    func keysAndDescribeMarkIt() throws {
        let sandbox = try CommandSandbox()
        try Self.plantSchema(sandbox)
        let keys = try sandbox.run("keys", Self.domain)
        #expect(keys.status == 0, "\(keys)")
        let lines = keys.output.split(separator: "\n").map(String.init)
        let mark = "(does not fit the key; the schema contradicts itself)"
        #expect(lines.contains("count (integer, Swift.Int), default twelve \(mark)"), "\(keys)")
        #expect(lines.contains("size (integer, Swift.Int), default 5, allows a through z \(mark)"), "\(keys)")
        #expect(lines.contains("fine (integer, Swift.Int), default 1"), "\(keys)")
        let describe = try sandbox.run("describe", Self.domain, "count")
        #expect(describe.status == 0, "\(describe)")
        let described = describe.output.split(separator: "\n").map(String.init)
        #expect(described.contains("default: twelve \(mark)"), "\(describe)")
        let problem = "the default of count does not fit it: count is an integer (Swift.Int), and twelve is a string"
        #expect(described.contains("problem: \(problem)"), "\(describe)")
        let fine = try sandbox.run("describe", Self.domain, "fine")
        #expect(!fine.output.contains("problem") && fine.output.contains("default: 1\n"), "\(fine)")
    }

    @Test("`explain` passes over such a default: a program reads its own compiled default")
    func explainPassesOverIt() throws {
        let sandbox = try CommandSandbox()
        try Self.plantSchema(sandbox)
        let explain = try sandbox.run("explain", Self.domain, "count")
        #expect(explain.status == 0, "\(explain)")
        let lines = explain.output.split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.hasPrefix("* default") }, "\(explain)")
        #expect(
            lines.contains { $0.hasPrefix("  default  twelve") && $0.contains("ignored: count is an integer") },
            "\(explain)")
        #expect(lines.contains("  (no layer is read: the program's own default, if any)"), "\(explain)")
        let json = try sandbox.run("explain", "--json", Self.domain, "count")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let layer = try #require((object["layers"] as? [[String: Any]])?.first)
        #expect(layer["layer"] as? String == "default" && layer["isRead"] as? Bool == false, "\(json)")
        #expect((layer["ignored"] as? String)?.contains("the schema contradicts itself") == true, "\(json)")
        // A consistent key's default is still the one read.
        let fine = try sandbox.run("explain", Self.domain, "fine")
        #expect(fine.output.split(separator: "\n").contains { $0.hasPrefix("* default") }, "\(fine)")
    }

    @Test("`write` judges a contradicting key by its type: no crash, a wrong type still refused")
    func writeJudgesByType() throws {
        let sandbox = try CommandSandbox()
        try Self.plantSchema(sandbox)
        let fits = try sandbox.run("write", Self.domain, "size", "5")
        #expect(fits.status == 0, "\(fits)")
        #expect(fits.error.contains("size is checked against its type only"), "\(fits)")
        #expect(try sandbox.storedValues(Self.domain)["size"] as? Int == 5)
        let wrongType = try sandbox.run("write", Self.domain, "size", "big")
        #expect(wrongType.status == 1 && wrongType.error.contains("Refused to write size"), "\(wrongType)")
        #expect(try sandbox.run("write", Self.domain, "count", "14").status == 0)
        #expect(try sandbox.run("write", Self.domain, "count", "twelve").status == 1)
        #expect(try sandbox.run("write", Self.domain, "level", "high").status == 0)
        #expect(try sandbox.run("write", Self.domain, "level", "-int", "2").status == 1)
    }
}
