import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `write` with every type flag and bare syntax, then `read`, `read-type` and `--json`.
@Suite("write and read", .mayBlock)
struct WriteReadTests {
    /// Writes `arguments` as the value of `key`, then checks the stored value, `read-type`,
    /// and what `read domain key` prints.
    private func check(
        _ arguments: [String], stored expected: Any, type: String, printed: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let sandbox = try CommandSandbox()
        let write = try sandbox.run(["write", "com.example.demo", "key"] + arguments)
        #expect(write.status == 0, "\(write)", sourceLocation: sourceLocation)
        #expect(write.output.isEmpty && write.error.isEmpty, "\(write)", sourceLocation: sourceLocation)
        let stored = try sandbox.storedValues("com.example.demo")["key"]
        #expect(
            stored.map { PropertyList.isEqual($0, expected) } == true,
            "stored \(String(describing: stored))", sourceLocation: sourceLocation
        )
        let readType = try sandbox.run("read-type", "com.example.demo", "key")
        #expect(
            readType.status == 0 && readType.output == "Type is \(type)\n", "\(readType)",
            sourceLocation: sourceLocation)
        let read = try sandbox.run("read", "com.example.demo", "key")
        #expect(read.status == 0 && read.output == printed + "\n", "\(read)", sourceLocation: sourceLocation)
    }

    @Test func string() throws {
        try check(["-string", "hello world"], stored: "hello world", type: "string", printed: "hello world")
        // A value that looks like a number stays a string.
        try check(["-string", "42"], stored: "42", type: "string", printed: "42")
    }

    @Test func integer() throws {
        try check(["-int", "42"], stored: 42, type: "integer", printed: "42")
        try check(["-integer", "-7"], stored: -7, type: "integer", printed: "-7")
    }

    @Test func float() throws {
        try check(["-float", "1.5"], stored: 1.5, type: "float", printed: "1.5")
        try check(["-float", "-2e3"], stored: -2000.0, type: "float", printed: "-2000")
    }

    @Test(arguments: [
        ("yes", true), ("YES", true), ("true", true), ("1", true), ("no", false), ("false", false), ("0", false),
    ])
    func boolean(text: String, value: Bool) throws {
        try check(["-bool", text], stored: value, type: "boolean", printed: value ? "1" : "0")
        try check(["-boolean", text], stored: value, type: "boolean", printed: value ? "1" : "0")
    }

    @Test func date() throws {
        let date = Date(timeIntervalSince1970: 1_714_979_289)  // 2024-05-06 07:08:09 UTC
        try check(
            ["-date", "2024-05-06 07:08:09 +0000"], stored: date, type: "date", printed: "2024-05-06 07:08:09 +0000")
        try check(["-date", "2024-05-06T07:08:09Z"], stored: date, type: "date", printed: "2024-05-06 07:08:09 +0000")
        try check(
            ["-date", "2024-05-06T09:08:09+02:00"], stored: date, type: "date", printed: "2024-05-06 07:08:09 +0000")
    }

    @Test func data() throws {
        try check(
            ["-data", "0a1bff"], stored: Data([0x0A, 0x1B, 0xFF]), type: "data",
            printed: "{length = 3, bytes = 0x0a1bff}")
        try check(
            ["-data", "<0a1b ff>"], stored: Data([0x0A, 0x1B, 0xFF]), type: "data",
            printed: "{length = 3, bytes = 0x0a1bff}")
    }

    @Test func array() throws {
        try check(
            ["-array", "a", "-int", "2", "-bool", "yes", "(x, y)"], stored: ["a", 2, true, ["x", "y"]] as [Any],
            type: "array", printed: "(\n    a,\n    2,\n    1,\n        (\n        x,\n        y\n    )\n)"
        )
        try check(["-array"], stored: [] as [Any], type: "array", printed: "(\n)")
    }

    @Test func dictionary() throws {
        try check(
            ["-dict", "name", "Ada", "age", "-int", "36"], stored: ["name": "Ada", "age": 36] as [String: Any],
            type: "dictionary", printed: "{\n    age = 36;\n    name = Ada;\n}"
        )
    }

    @Test func bareValuesInPropertyListSyntax() throws {
        // Old-style scalars are strings, as on macOS.
        try check(["5"], stored: "5", type: "string", printed: "5")
        try check(["hello world"], stored: "hello world", type: "string", printed: "hello world")
        try check(["\"quoted\""], stored: "quoted", type: "string", printed: "quoted")
        try check(["(1, 2)"], stored: ["1", "2"] as [Any], type: "array", printed: "(\n    1,\n    2\n)")
        try check(
            ["{ a = 1; b = (x); }"], stored: ["a": "1", "b": ["x"]] as [String: Any], type: "dictionary",
            printed: "{\n    a = 1;\n    b =     (\n        x\n    );\n}")
        try check(["<integer>5</integer>"], stored: 5, type: "integer", printed: "5")
        try check(["<real>2.5</real>"], stored: 2.5, type: "float", printed: "2.5")
        try check(["<true/>"], stored: true, type: "boolean", printed: "1")
        try check(["<0a1b>"], stored: Data([0x0A, 0x1B]), type: "data", printed: "{length = 2, bytes = 0x0a1b}")
    }

    @Test func arrayAddAndDictAdd() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "list", "-array-add", "a")
        try sandbox.run("write", "com.example.demo", "list", "-array-add", "b", "-int", "3")
        try sandbox.run("write", "com.example.demo", "map", "-dict-add", "x", "1")
        try sandbox.run("write", "com.example.demo", "map", "-dict-add", "y", "-int", "2", "x", "replaced")
        let values = try sandbox.storedValues("com.example.demo")
        #expect(PropertyList.isEqual(values["list"] ?? 0, ["a", "b", 3] as [Any]))
        #expect(PropertyList.isEqual(values["map"] ?? 0, ["x": "replaced", "y": 2] as [String: Any]))
    }

    @Test func writeReplacesAWholeDomain() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "old", "-int", "1")
        let result = try sandbox.run("write", "com.example.demo", "{ greeting = hello; count = 3; }")
        #expect(result.status == 0, "\(result)")
        let values = try sandbox.storedValues("com.example.demo")
        #expect(PropertyList.isEqual(values, ["greeting": "hello", "count": "3"] as [String: Any]))
    }

    @Test func readADomainAsMacOSPrintsIt() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "greeting", "hello")
        try sandbox.run("write", "com.example.demo", "spaced", "-string", "hello world")
        try sandbox.run("write", "com.example.demo", "count", "-int", "-3")
        try sandbox.run("write", "com.example.demo", "my key", "-array", "1")
        let read = try sandbox.run("read", "com.example.demo")
        #expect(read.status == 0)
        #expect(
            read.output == """
                {
                    count = "-3";
                    greeting = hello;
                    "my key" =     (
                        1
                    );
                    spaced = "hello world";
                }

                """
        )
    }

    @Test func readEveryDomain() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.a", "k", "-int", "1")
        try sandbox.run("write", "com.example.b", "k", "-int", "2")
        try sandbox.run("write", "-g", "AppleLocale", "en_GB")
        let read = try sandbox.run("read")
        #expect(read.status == 0)
        #expect(
            read.output == """
                {
                    NSGlobalDomain =     {
                        AppleLocale = "en_GB";
                    };
                    "com.example.a" =     {
                        k = 1;
                    };
                    "com.example.b" =     {
                        k = 2;
                    };
                }

                """
        )
    }

    @Test func readJSON() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "{ name = Ada; }")
        try sandbox.run("write", "com.example.demo", "count", "-int", "3")
        try sandbox.run("write", "com.example.demo", "on", "-bool", "yes")
        try sandbox.run("write", "com.example.demo", "ratio", "-float", "0.5")
        try sandbox.run("write", "com.example.demo", "when", "-date", "2024-05-06T07:08:09Z")
        try sandbox.run("write", "com.example.demo", "bytes", "-data", "0102")
        try sandbox.run("write", "com.example.demo", "list", "-array", "a", "-int", "1")
        let read = try sandbox.run("read", "--json", "com.example.demo")
        #expect(read.status == 0)
        #expect(
            read.output == """
                {
                  "bytes": "AQI=",
                  "count": 3,
                  "list": [
                    "a",
                    1
                  ],
                  "name": "Ada",
                  "on": true,
                  "ratio": 0.5,
                  "when": "2024-05-06T07:08:09Z"
                }

                """
        )
        #expect(try sandbox.run("read", "com.example.demo", "count", "--json").output == "3\n")
        #expect(try sandbox.run("read", "--json", "com.example.demo", "name").output == "\"Ada\"\n")
        let all = try sandbox.run("read", "--json")
        let decoded = try JSONSerialization.jsonObject(with: all.outputData) as? [String: Any]
        #expect((decoded?["com.example.demo"] as? [String: Any])?["name"] as? String == "Ada")
    }

    @Test func domainsList() throws {
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("domains").output == "\n")
        try sandbox.run("write", "com.example.b", "k", "1")
        try sandbox.run("write", "com.example.a", "k", "1")
        try sandbox.run("write", "-g", "k", "1")
        let domains = try sandbox.run("domains")
        #expect(domains.status == 0)
        #expect(domains.output == "com.example.a, com.example.b\n")
        #expect(try sandbox.run("domains", "--json").output == "[\n  \"com.example.a\",\n  \"com.example.b\"\n]\n")
    }

    @Test func globalDomainIsFoundationsGlobalPreferencesFile() throws {
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("write", "-g", "AppleLocale", "-string", "en_GB").status == 0)
        #expect(try sandbox.run("write", "NSGlobalDomain", "Units", "-string", "metric").status == 0)
        #expect(try sandbox.run("write", "-globalDomain", "Count", "-int", "2").status == 0)
        let values = try sandbox.storedValues(".GlobalPreferences")
        #expect(PropertyList.isEqual(values, ["AppleLocale": "en_GB", "Units": "metric", "Count": 2] as [String: Any]))
        #expect(try sandbox.run("read", "-g", "Units").output == "metric\n")
        #expect(try sandbox.run("read", "NSGlobalDomain", "AppleLocale").output == "en_GB\n")
        #expect(try sandbox.run("read-type", "-g", "Count").output == "Type is integer\n")
        #expect(!(try sandbox.fileNames()).contains("NSGlobalDomain.plist"))
    }

    @Test func pathOptionWorksOnAnyFile() throws {
        let sandbox = try CommandSandbox()
        let file = sandbox.directory.appendingPathComponent("elsewhere/settings.plist").path
        #expect(try sandbox.run("write", "--path", file, "volume", "-int", "7").status == 0)
        #expect(try sandbox.run("read", "-path", file, "volume").output == "7\n")
        #expect(try sandbox.run("read", "--path", file).output == "{\n    volume = 7;\n}\n")
        // A domain that is a path works the same, with or without `.plist`.
        #expect(try sandbox.run("read", file, "volume").output == "7\n")
        #expect(try sandbox.run("read", String(file.dropLast(".plist".count)), "volume").output == "7\n")
        let decoded = try PropertyList.decode(try Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(decoded?["volume"] as? Int == 7)
        #expect(try sandbox.run("domains").output == "\n")
    }

    @Test func fileIsFoundationsFormatAndMode() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "greeting", "hello")
        let text = String(decoding: sandbox.bytes("com.example.demo") ?? Data(), as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(text.contains("<key>greeting</key>\n\t<string>hello</string>"))
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.fileURL("com.example.demo").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
