import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `defaults` with administrator layers: `XDG_CONFIG_DIRS` of two directories, the first winning.
@Suite("administrator layers")
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

        func run(_ arguments: String...) throws -> ChildProcess.Result {
            try sandbox.run(arguments, environment: ["XDG_CONFIG_DIRS": "\(first.path):\(second.path)"])
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
}
