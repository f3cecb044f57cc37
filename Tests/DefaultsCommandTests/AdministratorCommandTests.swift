import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `defaults` with administrator layers: `XDG_CONFIG_DIRS` of two directories, the first winning.
@Suite("administrator layers", .mayBlock)
struct AdministratorCommandTests {
    /// The sandbox, its two administrator directories, and `run` with `XDG_CONFIG_DIRS` set.
    final class Layers {
        let sandbox: CommandSandbox
        let first: URL
        let second: URL

        init() throws {
            sandbox = try CommandSandbox()
            first = sandbox.directory.appendingPathComponent("xdg-first", isDirectory: true)
            second = sandbox.directory.appendingPathComponent("xdg-second", isDirectory: true)
        }

        func write(_ values: [String: Any], to path: String, in directory: URL) throws {
            let url = directory.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try PropertyList.encodeXML(values).write(to: url)
        }

        var environment: [String: String] { ["XDG_CONFIG_DIRS": "\(first.path):\(second.path)"] }

        func run(_ arguments: String...) throws -> ChildProcess.Result {
            try sandbox.run(arguments, environment: environment)
        }
    }

    @Test("Writing a managed key is refused with the managed file's name, status 1, nothing written")
    func managedWriteRefused() throws {
        let layers = try Layers()
        try layers.write(["locked": 1], to: "managed/com.example.app.plist", in: layers.second)
        #expect(try layers.run("write", "com.example.app", "other", "-int", "2").status == 0)
        let before = layers.sandbox.bytes("com.example.app")
        let result = try layers.run("write", "com.example.app", "locked", "-int", "5")
        let managedFile = layers.second.appendingPathComponent("managed/com.example.app.plist").path
        #expect(result.status == 1, "\(result)")
        #expect(
            result.error
                == "The key locked of com.example.app is managed by the administrator in \(managedFile); it was not written\n"
        )
        #expect(result.output.isEmpty)
        #expect(layers.sandbox.bytes("com.example.app") == before)
    }

    @Test("Replacing a domain with managed keys in it is refused, naming them, nothing written")
    func managedKeysInAReplacementRefused() throws {
        let layers = try Layers()
        try layers.write(["locked": 1, "pinned": "x"], to: "managed/com.example.app.plist", in: layers.second)
        #expect(try layers.run("write", "com.example.app", "other", "-int", "2").status == 0)
        let before = layers.sandbox.bytes("com.example.app")
        let managedFile = layers.second.appendingPathComponent("managed/com.example.app.plist").path
        let result = try layers.run("write", "com.example.app", "{ pinned = y; locked = 5; free = 1; }")
        #expect(result.status == 1, "\(result)")
        #expect(
            result.error
                == "The keys locked, pinned of com.example.app are managed by the administrator in \(managedFile); nothing was written\n"
        )
        #expect(layers.sandbox.bytes("com.example.app") == before)
        // Without the managed keys the replacement goes through.
        #expect(try layers.run("write", "com.example.app", "{ free = 1; }").status == 0)
        #expect(try layers.run("read", "com.example.app", "free").output == "1\n")
    }

    @Test("read-source names the layer and the file a value comes from")
    func readSource() throws {
        let layers = try Layers()
        try layers.write(["managed": 1], to: "managed/com.example.app.plist", in: layers.first)
        try layers.write(["vendor": 1, "both": "first"], to: "com.example.app.plist", in: layers.first)
        try layers.write(["both": "second", "user": 1], to: "com.example.app.plist", in: layers.second)
        #expect(try layers.run("write", "com.example.app", "user", "-int", "2").status == 0)
        let firstVendor = layers.first.appendingPathComponent("com.example.app.plist").path
        let expectations = [
            ("managed", "managed \(layers.first.appendingPathComponent("managed/com.example.app.plist").path)\n"),
            ("vendor", "vendor \(firstVendor)\n"),
            ("both", "vendor \(firstVendor)\n"),
            ("user", "user \(layers.sandbox.fileURL("com.example.app").path)\n"),
        ]
        for (key, expected) in expectations {
            let result = try layers.run("read-source", "com.example.app", key)
            #expect(result.status == 0, "\(key): \(result)")
            #expect(result.output == expected, "\(key): \(result)")
        }
        let missing = try layers.run("read-source", "com.example.app", "missing")
        #expect(missing.status == 1)
        #expect(missing.error == "The domain/default pair of (com.example.app, missing) does not exist\n")
        let usage = try layers.run("read-source", "com.example.app")
        #expect(usage.status == 64)
    }

    @Test("watch prints changes to the managed and vendor files, as the value programs read")
    func watchSeesAdministratorFiles() throws {
        let layers = try Layers()
        #expect(try layers.run("write", "com.example.app", "user", "-int", "1").status == 0)
        try layers.write(["theme": "light"], to: "com.example.app.plist", in: layers.first)
        // Directories made after the suite opened are not watched (as documented): make them first.
        try layers.write(["other": 0], to: "managed/com.example.app.plist", in: layers.second)
        let watch = try layers.sandbox.start(["watch", "com.example.app"], environment: layers.environment)
        _ = try watch.line(.error) { $0.hasPrefix("Watching ") }
        try layers.write(["other": 0, "locked": 1], to: "managed/com.example.app.plist", in: layers.second)
        try watch.waitForLines { $0.contains("locked = 1;") }
        try layers.write(["theme": "dark"], to: "com.example.app.plist", in: layers.first)
        try watch.waitForLines { $0.contains("theme = dark;") }
        // And the user's own file still.
        #expect(try layers.run("write", "com.example.app", "user", "-int", "2").status == 0)
        try watch.waitForLines { $0.contains("user = 2;") }
        watch.signal(SIGTERM)
        #expect(try watch.finish().termination == .exited(0))
        #expect(watch.lines() == ["locked = 1;", "theme = dark;", "user = 2;"])
    }

    @Test("read of a domain with only administrator values says so; --effective prints what programs read")
    func readOfAnAdministeredDomain() throws {
        let layers = try Layers()
        try layers.write(["locked": 1], to: "managed/com.example.app.plist", in: layers.second)
        try layers.write(["theme": "light", "locked": 0], to: "com.example.app.plist", in: layers.first)

        let absent = try layers.run("read", "com.example.app")
        #expect(absent.status == 1)
        #expect(
            absent.error
                == "Domain com.example.app does not exist among the user's values, but the administrator sets 1 managed "
                + "and 2 vendor value(s) for it; `defaults read --effective com.example.app` prints what programs read\n"
        )
        let absentKey = try layers.run("read", "com.example.app", "theme")
        #expect(absentKey.status == 1)
        #expect(absentKey.error.contains("`defaults read --effective com.example.app theme`"), "\(absentKey)")

        let effective = try layers.run("read", "--effective", "--json", "com.example.app")
        #expect(effective.status == 0, "\(effective)")
        let values = try JSONSerialization.jsonObject(with: Data(effective.output.utf8)) as? [String: Any]
        #expect(values?["locked"] as? Int == 1)
        #expect(values?["theme"] as? String == "light")

        #expect(try layers.run("write", "com.example.app", "theme", "-string", "dark").status == 0)
        #expect(try layers.run("read", "--effective", "com.example.app", "theme").output == "dark\n")
        #expect(try layers.run("read", "--effective", "com.example.app", "locked").output == "1\n")
        // Without --effective, the user's own values only, as before.
        #expect(try layers.run("read", "com.example.app").output == "{\n    theme = dark;\n}\n")
        // A domain with no values anywhere says only what macOS says.
        let missing = try layers.run("read", "com.example.none")
        #expect(missing.error == "Domain com.example.none does not exist\n")
    }
}
