import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `defaults explain`: every layer of a key, from real files in two administrator directories,
/// read by the real command in a child process.
@Suite("defaults explain", .mayBlock)
struct ExplainCommandTests {
    static let domain = SchemaCommandTests.domain

    /// Two administrator directories in the sandbox, `first` listed first in `XDG_CONFIG_DIRS`.
    struct Administrators {
        let first: URL
        let second: URL
        var environment: [String: String] { ["XDG_CONFIG_DIRS": first.path + ":" + second.path] }

        init(_ sandbox: CommandSandbox) throws {
            first = sandbox.directory.appendingPathComponent("admin-first", isDirectory: true)
            second = sandbox.directory.appendingPathComponent("admin-second", isDirectory: true)
            for directory in [first, second] {
                try FileManager.default.createDirectory(
                    at: directory.appendingPathComponent("managed"), withIntermediateDirectories: true)
            }
        }

        func vendor(_ directory: URL) -> URL { directory.appendingPathComponent("\(ExplainCommandTests.domain).plist") }
        func managed(_ directory: URL) -> URL {
            directory.appendingPathComponent("managed/\(ExplainCommandTests.domain).plist")
        }
    }

    /// An XML property list laid out over lines, `body` holding the dictionary's entries.
    static func xml(_ body: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \(body)
            </dict>
            </plist>

            """.utf8)
    }

    /// The layers of `--json`'s output, each a dictionary of its fields.
    static func jsonLayers(_ output: String) throws -> (document: [String: Any], layers: [[String: Any]]) {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return (document, try #require(document["layers"] as? [[String: Any]]))
    }

    @Test("Every layer from the default up, the winner by the library's order, lines, binary files and writability")
    func layersAndWinner() throws {
        let sandbox = try CommandSandbox()
        let schemaPath = try SchemaCommandTests.exportSchema(sandbox)
        let administrators = try Administrators(sandbox)
        // The second directory's vendor file is XML, with a nested dictionary holding the same key
        // name first; the first directory's is binary.
        try Self.xml(
            """
            <key>window</key>
            <dict>
                <key>fontSize</key>
                <integer>1</integer>
            </dict>
            <!-- <key>fontSize</key> -->
            <key>fontSize</key>
            <integer>20</integer>
            """
        ).write(to: administrators.vendor(administrators.second))
        try PropertyListSerialization.data(fromPropertyList: ["fontSize": 30], format: .binary, options: 0)
            .write(to: administrators.vendor(administrators.first))
        #expect(try sandbox.run("write", Self.domain, "fontSize", "14").status == 0)

        let text = try sandbox.run(["explain", Self.domain, "fontSize"], environment: administrators.environment)
        #expect(text.status == 0, "\(text)")
        let second = administrators.vendor(administrators.second).path
        let first = administrators.vendor(administrators.first).path
        let user = sandbox.fileURL(Self.domain).path
        #expect(
            text.output.split(separator: "\n").map(String.init) == [
                "fontSize of \(Self.domain): integer (Swift.Int), schema \(schemaPath)",
                "  default  12  \(schemaPath)",
                "  vendor   20  \(second):11",
                "  vendor   30  \(first) (binary)",
                "* user     14  \(user):5",
                "* the value a program reads",
                "writable: true",
            ], "\(text.output)")

        // Managed values: the first directory's does not fit the key's type, so it is passed over
        // and the second directory's is read; the key is not writable.
        try Self.xml("<key>fontSize</key>\n<string>big</string>").write(
            to: administrators.managed(administrators.first))
        try Self.xml("<key>theme</key>\n<string>dark</string>\n<key>fontSize</key>\n<integer>16</integer>").write(
            to: administrators.managed(administrators.second))
        let json = try sandbox.run(
            ["explain", Self.domain, "fontSize", "--json"], environment: administrators.environment)
        #expect(json.status == 0, "\(json)")
        let (document, layers) = try Self.jsonLayers(json.output)
        #expect(layers.map { $0["layer"] as? String } == ["default", "vendor", "vendor", "user", "managed", "managed"])
        #expect(layers.map { $0["isRead"] as? Bool } == [false, false, false, false, true, false])
        let readManaged = layers[4]
        #expect(readManaged["file"] as? String == administrators.managed(administrators.second).path)
        #expect(readManaged["line"] as? Int == 7)
        #expect(readManaged["value"] as? [String: Int] == ["integer": 16])
        let ignored = layers[5]
        #expect(ignored["file"] as? String == administrators.managed(administrators.first).path)
        #expect(ignored["ignored"] as? String == "expected integer, found string")
        #expect(ignored["value"] as? [String: String] == ["string": "big"])
        #expect(layers[2]["binary"] as? Bool == true)
        #expect(layers[2]["line"] == nil)
        #expect(layers[0]["file"] as? String == schemaPath)
        #expect(document["writable"] as? Bool == false)
        // Locked by the file whose value programs read, not by the one they pass over.
        #expect(
            document["notWritableBecause"] as? String
                == "managed by the administrator in \(administrators.managed(administrators.second).path)")
        #expect(document["schema"] as? String == schemaPath)
        #expect(document["type"] as? String == "integer")
        #expect(document["domain"] as? String == Self.domain)
        #expect(document["key"] as? String == "fontSize")

        // The text form says the same.
        let managedText = try sandbox.run(
            ["explain", Self.domain, "fontSize"], environment: administrators.environment)
        let lines = managedText.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("* managed  16  \(administrators.managed(administrators.second).path):7"), "\(lines)")
        #expect(
            lines.contains(
                "  managed  big  \(administrators.managed(administrators.first).path):5  "
                    + "ignored: expected integer, found string"), "\(lines)")
    }

    @Test("A user's value of the wrong type leaves the default read; a value outside the range is read as it is")
    func userValueOfTheWrongType() throws {
        let sandbox = try CommandSandbox()
        try SchemaCommandTests.exportSchema(sandbox)
        let administrators = try Administrators(sandbox)
        try Self.xml("<key>fontSize</key>\n<integer>100</integer>").write(
            to: administrators.vendor(administrators.second))
        // Another program stored a string, which the schema's check of `defaults write` refuses.
        try sandbox.store(["fontSize": "huge"], as: Self.domain)
        let json = try sandbox.run(
            ["explain", Self.domain, "fontSize", "--json"], environment: administrators.environment)
        #expect(json.status == 0, "\(json)")
        let layers = try Self.jsonLayers(json.output).layers
        #expect(layers.map { $0["layer"] as? String } == ["default", "vendor", "user"])
        #expect(layers.map { $0["isRead"] as? Bool } == [true, false, false])
        #expect(
            layers[2]["ignored"] as? String
                == "expected integer, found string; a program's typed read returns the default")
        #expect(
            layers[1]["problem"] as? String
                == "not among the values the schema allows (8 through 72); read as it is")
        #expect(layers[1]["ignored"] == nil)

        // Without the user's value, the vendor's value is read though it is out of range.
        try sandbox.store([:], as: Self.domain)
        let vendor = try Self.jsonLayers(
            try sandbox.run(["explain", Self.domain, "fontSize", "--json"], environment: administrators.environment)
                .output
        ).layers
        #expect(vendor.map { $0["isRead"] as? Bool } == [false, true])
    }

    @Test("Without a schema: no default layer and no type checks; a key held nowhere fails clearly")
    func withoutSchema() throws {
        let sandbox = try CommandSandbox()
        let administrators = try Administrators(sandbox)
        let domain = "com.example.no-schema"
        try Self.xml("<key>size</key>\n<string>large</string>").write(
            to: administrators.first.appendingPathComponent("managed/\(domain).plist"))
        #expect(try sandbox.run("write", domain, "size", "-int", "3").status == 0)
        let result = try sandbox.run(["explain", domain, "size"], environment: administrators.environment)
        #expect(result.status == 0, "\(result)")
        let managed = administrators.first.appendingPathComponent("managed/\(domain).plist").path
        #expect(
            result.output.split(separator: "\n").map(String.init) == [
                "size of \(domain): no schema",
                "  user     3  \(sandbox.fileURL(domain).path):5",
                "* managed  large  \(managed):5",
                "* the value a program reads",
                "writable: false: managed by the administrator in \(managed)",
            ], "\(result.output)")

        for (arguments, environment) in [
            (["explain", domain, "missing"], administrators.environment),
            (["explain", "com.example.nothing-at-all", "size"], [:]),
        ] {
            let missing = try sandbox.run(arguments, environment: environment)
            #expect(missing.status == 1, "\(missing)")
            #expect(missing.output.isEmpty)
            #expect(
                missing.error.contains("No layer holds \(arguments[2]) of \(arguments[1])"), "\(missing.error)")
        }
        let usage = try sandbox.run("explain", domain)
        #expect(usage.status == 64)
    }

    static var syncHelperIsBuilt: Bool {
        FileManager.default.isExecutableFile(atPath: builtExecutable("DefaultsSyncTestingHelper"))
    }

    @Test(
        "A synced key's user layer tells what the sync journal records: the writer, pushed or not, changed since",
        .enabled(if: syncHelperIsBuilt))
    func syncJournal() async throws {
        let sandbox = try CommandSandbox()
        // A program syncing its suite through an in-memory server; a peer machine writes `greeting`.
        let machine = try ChildProcess(
            builtExecutable("DefaultsSyncTestingHelper"), [], environment: sandbox.environment, input: .pipe)
        func send(_ command: String) async throws -> String {
            let start = machine.lines().count
            try machine.write(command + "\n")
            return try await machine.line(after: start) { _ in true }
        }
        _ = try await machine.line { $0 == "ready" }
        #expect(try await send("peer-set greeting hello") == "ok")
        try await waitUntil("the peer's value to arrive") { try await send("get greeting") == "value greeting hello" }
        #expect(try await send("set local hi") == "ok")
        // A change the store refuses is set aside, not pending: waiting for sync returns.
        #expect(try await send("refuse rejected") == "ok")
        #expect(try await send("set rejected no") == "ok")
        try await waitUntil("the local change to be pushed") {
            try await send("wait-at-most 5").contains("pending=0")
        }
        #expect(try await send("quit") == "ok")
        try await machine.wait()

        let domain = "sync-testing-helper"
        let received = try Self.jsonLayers(try sandbox.run("explain", domain, "greeting", "--json").output).layers
        let receivedSync = try #require(received.first?["sync"] as? [String: Any], "\(received)")
        #expect(receivedSync["writer"] as? String == "peer")
        #expect(receivedSync["pending"] as? Bool == false)
        #expect(receivedSync["matchesValue"] as? Bool == true)
        #expect(receivedSync["writtenAt"] is String)
        let local = try Self.jsonLayers(try sandbox.run("explain", domain, "local", "--json").output).layers
        let localSync = try #require(local.first?["sync"] as? [String: Any], "\(local)")
        #expect(localSync["writer"] as? String != "peer")
        #expect(localSync["matchesValue"] as? Bool == true)
        #expect(localSync["setAside"] == nil)
        let rejected = try Self.jsonLayers(try sandbox.run("explain", domain, "rejected", "--json").output).layers
        let rejectedSync = try #require(rejected.first?["sync"] as? [String: Any], "\(rejected)")
        #expect(rejectedSync["pending"] as? Bool == false)
        #expect(rejectedSync["setAside"] as? String == "the store refused it: refused by the test")
        let rejectedText = try sandbox.run("explain", domain, "rejected").output
        #expect(rejectedText.contains(", not pushed: the store refused it: refused by the test"), "\(rejectedText)")

        // A change made with no syncing program running is not yet in the journal.
        #expect(try sandbox.run("write", domain, "greeting", "-string", "changed").status == 0)
        let changed = try sandbox.run("explain", domain, "greeting")
        #expect(changed.status == 0, "\(changed)")
        #expect(
            changed.output.contains(
                "      synced: version of \(receivedSync["writtenAt"] as? String ?? "?"), writer peer, "
                    + "pushed or received; the file's value changed since (not yet recorded for sync)"),
            "\(changed.output)")
    }
}

/// `defaults json-schema`: the domain's schema as a JSON Schema, from a real program's export.
@Suite("defaults json-schema", .mayBlock)
struct JSONSchemaCommandTests {
    @Test("Prints a JSON Schema of the exported keys: types, defaults, range, choices; fails without a schema")
    func printsJSONSchema() throws {
        let sandbox = try CommandSandbox()
        try SchemaCommandTests.exportSchema(sandbox)
        let result = try sandbox.run("json-schema", SchemaCommandTests.domain)
        #expect(result.status == 0, "\(result)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(document["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        #expect(document["additionalProperties"] as? Bool == true)
        let properties = try #require(document["properties"] as? [String: [String: Any]])
        #expect(properties.keys.sorted() == ["fontSize", "nickname", "showsToolbar", "theme", "volume"])
        #expect(properties["fontSize"]?["type"] as? String == "integer")
        #expect(properties["fontSize"]?["minimum"] as? Int == 8)
        #expect(properties["fontSize"]?["maximum"] as? Int == 72)
        #expect(properties["fontSize"]?["description"] as? String == "The size of the text, in points.")
        #expect(properties["volume"]?["type"] as? String == "number")
        #expect(properties["theme"]?["enum"] as? [String] == ["light", "dark", "system"])
        #expect(properties["showsToolbar"]?["default"] as? Bool == true)

        let none = try sandbox.run("json-schema", "com.example.no-schema")
        #expect(none.status == 1)
        #expect(none.error.contains("has no schema"))
    }
}
