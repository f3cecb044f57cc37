import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// Every failure: macOS's message on standard error, a non-zero status, nothing on standard
/// output, and the domain's file exactly as it was.
@Suite("errors", .mayBlock)
struct ErrorTests {
    /// A sandbox holding `com.example.demo` with a string, an integer, an array and a dictionary.
    private func sandboxWithDemo() throws -> CommandSandbox {
        let sandbox = try CommandSandbox()
        let write = try sandbox.run(
            "write", "com.example.demo", "{ greeting = hello; count = 3; list = (a); map = { k = v; }; }")
        #expect(write.status == 0, "\(write)")
        return sandbox
    }

    /// Runs a command that must fail with `message` (and `status`), and checks that no file
    /// changed: the domain's bytes and the directory's names are as before.
    private func expectFailure(
        _ sandbox: CommandSandbox, _ arguments: [String], message: String, status: Int32 = 1,
        domain: String = "com.example.demo", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = sandbox.bytes(domain)
        let namesBefore = try sandbox.fileNames()
        let result = try sandbox.run(arguments)
        #expect(result.status == status, "\(arguments): \(result)", sourceLocation: sourceLocation)
        #expect(result.error == message + "\n", "\(arguments): \(result)", sourceLocation: sourceLocation)
        #expect(result.output.isEmpty, "\(arguments): \(result)", sourceLocation: sourceLocation)
        #expect(sandbox.bytes(domain) == before, "\(arguments) changed the file", sourceLocation: sourceLocation)
        #expect(
            try sandbox.fileNames() == namesBefore, "\(arguments) changed the directory", sourceLocation: sourceLocation
        )
    }

    @Test func missingDomainAndKey() throws {
        let sandbox = try sandboxWithDemo()
        try expectFailure(sandbox, ["read", "com.example.none"], message: "Domain com.example.none does not exist")
        try expectFailure(
            sandbox, ["read", "com.example.none", "k"],
            message: "The domain/default pair of (com.example.none, k) does not exist"
        )
        try expectFailure(
            sandbox, ["read", "com.example.demo", "nokey"],
            message: "The domain/default pair of (com.example.demo, nokey) does not exist"
        )
        try expectFailure(
            sandbox, ["read-type", "com.example.demo", "nokey"],
            message: "The domain/default pair of (com.example.demo, nokey) does not exist"
        )
        try expectFailure(sandbox, ["read", "-g"], message: "Domain NSGlobalDomain does not exist")
        try expectFailure(
            sandbox, ["delete", "com.example.none"],
            message: "Domain (com.example.none) not found.\nDefaults have not been changed."
        )
        try expectFailure(
            sandbox, ["delete", "com.example.demo", "nokey"],
            message:
                "The domain/default pair of (com.example.demo, nokey) does not exist\nDefaults have not been changed."
        )
        try expectFailure(
            sandbox, ["rename", "com.example.demo", "nokey", "other"],
            message: "Key nokey does not exist in domain com.example.demo; leaving defaults unchanged"
        )
        try expectFailure(
            sandbox, ["export", "com.example.none", "-"], message: "Domain com.example.none does not exist")
        #expect(sandbox.bytes("com.example.none") == nil)
    }

    @Test func valuesThatDoNotParse() throws {
        let sandbox = try sandboxWithDemo()
        let write = ["write", "com.example.demo", "key"]
        try expectFailure(sandbox, write + ["{ a = 1"], message: "Could not parse: { a = 1.  Try single-quoting it.")
        try expectFailure(sandbox, write + ["(1, 2"], message: "Could not parse: (1, 2.  Try single-quoting it.")
        try expectFailure(
            sandbox, write + ["<integer>x</integer>"],
            message: "Could not parse: <integer>x</integer>.  Try single-quoting it.")
        try expectFailure(
            sandbox, ["write", "com.example.demo", "{ a = 1"],
            message: "Could not parse: { a = 1.  Try single-quoting it."
        )
        try expectFailure(
            sandbox, ["write", "com.example.demo", "(1, 2)"],
            message: "Rep argument is not a dictionary\nDefaults have not been changed."
        )
        try expectFailure(
            sandbox, write + ["hello", "world"],
            message: "Unexpected argument world after the value; quote a value that holds spaces"
                + "\nUsage: defaults write <domain> <key> <value>", status: 64
        )
    }

    @Test func typeFlagsThatDoNotFit() throws {
        let sandbox = try sandboxWithDemo()
        let write = ["write", "com.example.demo", "key"]
        try expectFailure(
            sandbox, write + ["-int", "abc"],
            message: "Could not parse: abc.  The value of -int must be an integer, such as 42 or -7.")
        try expectFailure(
            sandbox, write + ["-integer", "1.5"],
            message: "Could not parse: 1.5.  The value of -integer must be an integer, such as 42 or -7.")
        try expectFailure(
            sandbox, write + ["-float", "fast"],
            message: "Could not parse: fast.  The value of -float must be a number, such as 1.5 or -2e3.")
        try expectFailure(
            sandbox, write + ["-bool", "maybe"],
            message: "Could not parse: maybe.  The value of -bool must be yes, no, true, false, 1 or 0.")
        try expectFailure(
            sandbox, write + ["-boolean", "2"],
            message: "Could not parse: 2.  The value of -boolean must be yes, no, true, false, 1 or 0.")
        try expectFailure(
            sandbox, write + ["-date", "yesterday"],
            message:
                "Could not parse: yesterday.  The value of -date must be a date such as \"2024-05-06 07:08:09 +0000\" or 2024-05-06T07:08:09Z."
        )
        try expectFailure(
            sandbox, write + ["-data", "abc"],
            message: "Could not parse: abc.  The value of -data must be hexadecimal bytes, such as 0a1bff.")
        try expectFailure(
            sandbox, write + ["-data", "zz"],
            message: "Could not parse: zz.  The value of -data must be hexadecimal bytes, such as 0a1bff.")
        try expectFailure(
            sandbox, write + ["-array", "a", "-int", "x"],
            message: "Could not parse: x.  The value of -int must be an integer, such as 42 or -7.")
        try expectFailure(
            sandbox, write + ["-dict", "a", "1", "b"],
            message: "Key b lacks a corresponding value\nUsage: defaults write <domain> <key> -dict <key> <value> …",
            status: 64)
        try expectFailure(
            sandbox, ["write", "com.example.demo", "greeting", "-array-add", "x"],
            message: "Value for key greeting is not an array; cannot append.  Leaving defaults unchanged."
        )
        try expectFailure(
            sandbox, ["write", "com.example.demo", "list", "-dict-add", "k", "v"],
            message: "Value for key list is not a dictionary; cannot add.  Leaving defaults unchanged."
        )
        try expectFailure(
            sandbox, write + ["-int"],
            message: "Missing value after -int\nUsage: defaults write <domain> <key> -int <value>", status: 64
        )
    }

    @Test func usageErrors() throws {
        let sandbox = try sandboxWithDemo()
        try expectFailure(
            sandbox, ["write", "com.example.demo"],
            message: "Missing key and value\nUsage: defaults write <domain> <key> <value>", status: 64)
        try expectFailure(
            sandbox, ["read", "com.example.demo", "a", "b"],
            message: "Too many arguments\nUsage: defaults read [<domain> [<key>]]", status: 64)
        try expectFailure(
            sandbox, ["read-type", "com.example.demo"],
            message: "Missing key\nUsage: defaults read-type <domain> <key>", status: 64)
        let unknown = try sandbox.run("frobnicate")
        #expect(unknown.status != 0 && !unknown.error.isEmpty)
    }

    @Test func importOfSomethingElse() throws {
        let sandbox = try sandboxWithDemo()
        try expectFailure(
            sandbox, ["import", "com.example.demo", sandbox.directory.appendingPathComponent("missing.plist").path],
            message: "Could not read data from \(sandbox.directory.appendingPathComponent("missing.plist").path)"
        )
        let before = sandbox.bytes("com.example.demo")
        let result = try sandbox.run(["import", "com.example.demo", "-"], input: Data("(1, 2)".utf8))
        #expect(result.status == 1)
        #expect(
            result.error
                == "Could not import -: it is not a property-list dictionary (its top level is an array, not a dictionary)\n"
        )
        let garbage = try sandbox.run(["import", "com.example.demo", "-"], input: Data("<plist><dict><key>a".utf8))
        #expect(
            garbage.status == 1 && garbage.error.hasPrefix("Could not import -: it is not a property-list dictionary (")
        )
        #expect(sandbox.bytes("com.example.demo") == before)
    }

    /// A damaged file is reported by every command that only reads or edits keys, and left exactly
    /// where and as it is (no backup, no rewrite).
    @Test(arguments: [Data("garbage {{".utf8), Data("bplist00\u{01}\u{02}".utf8), Data("(1, 2)".utf8)])
    func damagedFileIsReportedAndLeftAlone(contents: Data) throws {
        let sandbox = try CommandSandbox()
        try contents.write(to: sandbox.fileURL("com.example.bad"))
        let path = sandbox.fileURL("com.example.bad").path
        let prefix = "Could not read domain com.example.bad: \(path) is not a valid property list ("
        let suffix = "); it was left unchanged"
        let commands: [[String]] = [
            ["read", "com.example.bad"], ["read", "com.example.bad", "k"], ["read-type", "com.example.bad", "k"],
            ["write", "com.example.bad", "k", "v"], ["write", "com.example.bad", "k", "-array-add", "v"],
            ["delete", "com.example.bad", "k"], ["rename", "com.example.bad", "a", "b"],
            ["export", "com.example.bad", "-"],
            ["watch", "com.example.bad"], ["read"], ["find", "x"],
        ]
        for command in commands {
            let namesBefore = try sandbox.fileNames()
            let result = try sandbox.run(command)
            #expect(result.status == 1, "\(command): \(result)")
            #expect(result.error.hasPrefix(prefix) && result.error.hasSuffix(suffix + "\n"), "\(command): \(result)")
            #expect(sandbox.bytes("com.example.bad") == contents, "\(command) changed the file")
            #expect(try sandbox.fileNames() == namesBefore, "\(command) changed the directory")
        }
        // It is listed: it is there, and `read` says what is wrong with it.
        #expect(try sandbox.run("domains").output == "com.example.bad\n")
    }

    /// Commands that replace a whole domain go ahead; the damaged file is kept as a backup.
    @Test(arguments: [
        ["import", "com.example.bad", "-"], ["write", "com.example.bad", "{ a = 1; }"], ["delete", "com.example.bad"],
    ])
    func replacingADamagedDomainKeepsABackup(command: [String]) throws {
        let sandbox = try CommandSandbox()
        let damaged = Data("garbage {{".utf8)
        try damaged.write(to: sandbox.fileURL("com.example.bad"))
        let result = try sandbox.run(command, input: Data("{ a = 1; }".utf8))
        #expect(result.status == 0, "\(result)")
        let backups = try sandbox.fileNames().filter { $0.hasPrefix("com.example.bad.plist.corrupt-") }
        #expect(backups.count == 1)
        let backup = try #require(backups.first)
        #expect(
            result.error
                == "The damaged file \(sandbox.fileURL("com.example.bad").path) was moved to \(sandbox.directory.appendingPathComponent(backup).path)\n"
        )
        #expect(FileManager.default.contents(atPath: sandbox.directory.appendingPathComponent(backup).path) == damaged)
        if command.first == "delete" {
            // The domain's file is gone; the backup stays.
            #expect(sandbox.bytes("com.example.bad") == nil)
        } else {
            #expect(PropertyList.isEqual(try sandbox.storedValues("com.example.bad"), ["a": "1"]))
        }
    }

    @Test func directoryInThePlaceOfTheFile() throws {
        let sandbox = try CommandSandbox()
        try FileManager.default.createDirectory(
            at: sandbox.fileURL("com.example.dir"), withIntermediateDirectories: true)
        let message =
            "Could not read domain com.example.dir: \(sandbox.fileURL("com.example.dir").path) is a directory, not a property-list file"
        let importable = sandbox.directory.appendingPathComponent("importable.plist")
        try Data("{ a = 1; }".utf8).write(to: importable)
        let commands = [
            ["read", "com.example.dir"], ["write", "com.example.dir", "k", "v"],
            ["import", "com.example.dir", importable.path],
            ["delete", "com.example.dir"],
        ]
        for command in commands {
            try expectFailure(sandbox, command, message: message, domain: "com.example.dir")
        }
    }

    @Test(.enabled(if: getuid() != 0, "root may write anywhere"))
    func unwritableDirectoryWritesNothing() throws {
        let sandbox = try sandboxWithDemo()
        let before = sandbox.bytes("com.example.demo")
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: sandbox.path)
        defer { _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: sandbox.path) }
        let result = try sandbox.run("write", "com.example.demo", "k", "v")
        #expect(result.status == 1 && result.error.hasPrefix("Could not write domain com.example.demo: "), "\(result)")
        #expect(sandbox.bytes("com.example.demo") == before)
    }

    @Test func writeThatCannotReachTheDiskFails() throws {
        let sandbox = try CommandSandbox()
        // The file's directory would have to be made inside a regular file.
        let blocker = sandbox.directory.appendingPathComponent("blocker")
        try Data("x".utf8).write(to: blocker)
        let file = blocker.appendingPathComponent("settings.plist").path
        let result = try sandbox.run("write", "--path", file, "k", "v")
        #expect(result.status == 1, "\(result)")
        #expect(result.error.hasPrefix("Could not write domain \(file): "), "\(result)")
        #expect(FileManager.default.contents(atPath: blocker.path) == Data("x".utf8))
    }
}
