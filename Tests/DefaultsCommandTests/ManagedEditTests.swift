import DefaultsPropertyList
import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// The `defaults` command's edits beneath the administrator's managed files: applied by the
/// library's own rule, refused whole when they write a key the administrator enforces, and the
/// domain's file left exactly as it was.
@Suite("command edits of managed keys", .mayBlock)
struct ManagedEditTests {
    static let domain = "com.example.managed-edits"

    /// A sandbox with one administrator directory (`XDG_CONFIG_DIRS`).
    final class Administered {
        let sandbox: CommandSandbox
        let administrator: URL

        init() throws {
            sandbox = try CommandSandbox()
            administrator = sandbox.directory.appendingPathComponent("admin", isDirectory: true)
            try FileManager.default.createDirectory(
                at: administrator.appendingPathComponent("managed"), withIntermediateDirectories: true)
        }

        var managedFile: URL { administrator.appendingPathComponent("managed/\(ManagedEditTests.domain).plist") }

        func manage(_ values: [String: Any]) throws {
            try PropertyList.encodeXML(values).write(to: managedFile)
        }

        /// Writes the domain's schema where a program exports it.
        func declare(_ keys: [KeySchema]) throws {
            let url = sandbox.dataHome.appendingPathComponent("defaults/schemas/\(ManagedEditTests.domain).json")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONEncoder().encode(DomainSchema(domain: ManagedEditTests.domain, keys: keys)).write(to: url)
        }

        @discardableResult
        func run(_ arguments: String...) throws -> ChildProcess.Result {
            try sandbox.run(arguments, environment: ["XDG_CONFIG_DIRS": administrator.path])
        }

        /// Runs `arguments` and expects them refused whole: status 1, the error naming `keys` and
        /// the managed file, nothing printed, the domain's file (and the directory) as they were.
        func expectRefused(
            _ arguments: [String], keys: String, sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let before = sandbox.bytes(ManagedEditTests.domain)
            let names = try sandbox.fileNames()
            let result = try sandbox.run(arguments, environment: ["XDG_CONFIG_DIRS": administrator.path])
            #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
            #expect(result.output.isEmpty, sourceLocation: sourceLocation)
            #expect(
                result.error.hasPrefix("The \(keys) of \(ManagedEditTests.domain)"), "\(result.error)",
                sourceLocation: sourceLocation)
            #expect(
                result.error.contains("managed by the administrator in \(managedFile.path); "), "\(result.error)",
                sourceLocation: sourceLocation)
            #expect(sandbox.bytes(ManagedEditTests.domain) == before, sourceLocation: sourceLocation)
            #expect(try sandbox.fileNames() == names, sourceLocation: sourceLocation)
        }
    }

    @Test("An import of several keys, one of them managed, is refused whole; the file is unchanged")
    func importWithAManagedKeyRefused() throws {
        let administered = try Administered()
        try administered.manage(["locked": 1])
        try administered.sandbox.store(["kept": "yes"], as: Self.domain)
        let input = try PropertyList.encodeXML(["free": 2, "locked": 5, "other": "x"])
        let before = administered.sandbox.bytes(Self.domain)
        let result = try administered.sandbox.run(
            ["import", Self.domain, "-"], input: input,
            environment: ["XDG_CONFIG_DIRS": administered.administrator.path])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.error
                == "The key locked of \(Self.domain) is managed by the administrator in "
                + "\(administered.managedFile.path); nothing was written\n")
        #expect(administered.sandbox.bytes(Self.domain) == before)
        #expect(try administered.sandbox.storedValues(Self.domain).keys.sorted() == ["kept"])
    }

    @Test("Every edit that writes a managed key is refused: rename onto it, delete, -array-add, -dict-add")
    func everyEditRefused() throws {
        let administered = try Administered()
        try administered.manage(["locked": [1], "settings": ["a": 1]])
        // The user's file holds values of its own under managed keys, written before they were
        // managed.
        try administered.sandbox.store(["free": 1, "locked": [0], "settings": ["b": 2]], as: Self.domain)
        try administered.expectRefused(["rename", Self.domain, "free", "locked"], keys: "key locked")
        try administered.expectRefused(["delete", Self.domain, "locked"], keys: "key locked")
        try administered.expectRefused(["write", Self.domain, "locked", "-array-add", "2"], keys: "key locked")
        try administered.expectRefused(
            ["write", Self.domain, "settings", "-dict-add", "c", "3"], keys: "key settings")
        try administered.expectRefused(
            ["write", Self.domain, "{ locked = (3); settings = { }; free = 2; }"], keys: "keys locked, settings")
        // The keys it does not enforce are written as ever.
        #expect(try administered.run("write", Self.domain, "free", "-int", "3").status == 0)
        #expect(try administered.sandbox.storedValues(Self.domain)["free"] as? Int == 3)
    }

    @Test("A write of a managed key to a domain with no file leaves no file, nor a lock file")
    func refusedWriteLeavesNothingBehind() throws {
        let administered = try Administered()
        try administered.manage(["locked": true])
        try administered.expectRefused(["write", Self.domain, "locked", "-bool", "no"], keys: "key locked")
        #expect(administered.sandbox.bytes(Self.domain) == nil)
    }

    @Test("A replacement may drop the user's value of a managed key, as removeAll does, but not write one")
    func replacementDropsAManagedKeysUserValue() throws {
        let administered = try Administered()
        try administered.manage(["locked": 1])
        try administered.sandbox.store(["locked": 5, "free": 1], as: Self.domain)
        let result = try administered.run("write", Self.domain, "{ free = 2; }")
        #expect(result.status == 0, "\(result)")
        let stored = try administered.sandbox.storedValues(Self.domain)
        #expect(stored.keys.sorted() == ["free"])
        #expect(stored["free"] as? String == "2")
    }

    @Test("reset passes over a managed key the user's file does not hold, and is refused for one it holds")
    func resetAndManagedKeys() throws {
        let administered = try Administered()
        try administered.declare([
            KeySchema(name: "locked", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(0)),
            KeySchema(name: "size", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(1)),
        ])
        try administered.manage(["locked": 1])
        try administered.sandbox.store(["size": 3, "other": 1], as: Self.domain)
        #expect(try administered.run("reset", Self.domain).status == 0)
        #expect(try administered.sandbox.storedValues(Self.domain).keys.sorted() == ["other"])

        try administered.sandbox.store(["size": 3, "locked": 7], as: Self.domain)
        try administered.expectRefused(["reset", Self.domain], keys: "key locked")
    }

    @Test("A managed value of a type the schema's key does not read enforces nothing, as in the library")
    func managedValueOfTheWrongTypeIgnored() throws {
        let administered = try Administered()
        try administered.declare([
            KeySchema(name: "fontSize", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(12))
        ])
        // A program's `Int` key passes over a string: the user's value is read, so it is written.
        try administered.manage(["fontSize": "big"])
        let written = try administered.run("write", Self.domain, "fontSize", "14")
        #expect(written.status == 0, "\(written)")
        #expect(try administered.sandbox.storedValues(Self.domain)["fontSize"] as? Int == 14)
        #expect(try administered.run("writable", Self.domain, "fontSize").output == "true\n")
        #expect(try administered.run("delete", Self.domain, "fontSize").status == 0)

        // A value it reads enforces the key.
        try administered.manage(["fontSize": 16])
        try administered.expectRefused(["write", Self.domain, "fontSize", "14"], keys: "key fontSize")
        #expect(
            try administered.run("writable", Self.domain, "fontSize").output
                == "false: managed by the administrator in \(administered.managedFile.path)\n")

        // A key the schema does not declare: any value enforces it, as a key no program declares.
        try administered.manage(["undeclared": "text"])
        try administered.expectRefused(["write", Self.domain, "undeclared", "-int", "1"], keys: "key undeclared")
    }

    @Test("migrate moves a user's value onto a managed key beneath it, as a program's migration does")
    func migrateBeneathAManagedKey() throws {
        let administered = try Administered()
        try administered.declare([
            KeySchema(
                name: "fontSize", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(12),
                formerNames: ["textSize"])
        ])
        try administered.manage(["fontSize": 16])
        try administered.sandbox.store(["textSize": 14], as: Self.domain)
        let result = try administered.run("migrate", Self.domain)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "textSize -> fontSize\n")
        let stored = try administered.sandbox.storedValues(Self.domain)
        #expect(stored.keys.sorted() == ["fontSize"])
        #expect(stored["fontSize"] as? Int == 14)
    }
}
