import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `delete`, `rename`, `find`, `export` and `import`.
@Suite("delete, rename, find, export, import", .mayBlock)
struct EditTests {
    @Test func deleteAKey() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "{ a = 1; b = 2; }")
        let delete = try sandbox.run("delete", "com.example.demo", "a")
        #expect(delete.status == 0 && delete.output.isEmpty && delete.error.isEmpty, "\(delete)")
        #expect(PropertyList.isEqual(try sandbox.storedValues("com.example.demo"), ["b": "2"] as [String: Any]))
    }

    @Test func deleteADomain() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "{ a = 1; b = 2; }")
        try sandbox.run("write", "com.example.other", "c", "3")
        let delete = try sandbox.run("delete", "com.example.demo")
        #expect(delete.status == 0, "\(delete)")
        #expect(sandbox.bytes("com.example.demo") == nil)
        // A domain with no keys is gone, as on macOS.
        let read = try sandbox.run("read", "com.example.demo")
        #expect(read.status == 1 && read.error == "Domain com.example.demo does not exist\n", "\(read)")
        #expect(try sandbox.run("domains").output == "com.example.other\n")
    }

    @Test func renameAKey() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "old", "-int", "5")
        try sandbox.run("write", "com.example.demo", "other", "x")
        let rename = try sandbox.run("rename", "com.example.demo", "old", "new")
        #expect(rename.status == 0, "\(rename)")
        #expect(
            PropertyList.isEqual(
                try sandbox.storedValues("com.example.demo"), ["new": 5, "other": "x"] as [String: Any]))
        #expect(try sandbox.run("rename", "com.example.demo", "new", "new").status == 0)
        #expect(try sandbox.run("read", "com.example.demo", "new").output == "5\n")
        // Onto an existing key: that key's value is replaced.
        #expect(try sandbox.run("rename", "com.example.demo", "new", "other").status == 0)
        #expect(PropertyList.isEqual(try sandbox.storedValues("com.example.demo"), ["other": 5] as [String: Any]))
    }

    @Test func findKeysAndValues() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.app", "{ Greeting = hello; Farewell = bye; list = (x, HELLO); }")
        try sandbox.run("write", "com.example.other", "{ unrelated = 1; }")
        try sandbox.run("write", "org.hello.tool", "{ one = 1; two = 2; }")
        let find = try sandbox.run("find", "hello")
        #expect(find.status == 0, "\(find)")
        #expect(
            find.output == """
                Found 2 keys in domain 'com.example.app': {
                    Greeting = hello;
                    list =     (
                        x,
                        HELLO
                    );
                }
                Found 2 keys in domain 'org.hello.tool': {
                    one = 1;
                    two = 2;
                }

                """
        )
        #expect(
            try sandbox.run("find", "FAREWELL").output
                == "Found 1 keys in domain 'com.example.app': {\n    Farewell = bye;\n}\n")
        let none = try sandbox.run("find", "nowhere")
        #expect(none.status == 0 && none.output == "No domain, key, nor value containing 'nowhere'\n", "\(none)")
        let json = try sandbox.run("find", "--json", "bye")
        #expect(json.output == "{\n  \"com.example.app\": {\n    \"Farewell\": \"bye\"\n  }\n}\n")
        #expect(try sandbox.run("find", "--json", "nowhere").output == "{}\n")
    }

    @Test func exportWritesXML() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "greeting", "hello")
        try sandbox.run("write", "com.example.demo", "count", "-int", "3")
        let stdout = try sandbox.run("export", "com.example.demo", "-")
        #expect(stdout.status == 0)
        #expect(stdout.outputData == sandbox.bytes("com.example.demo"))
        #expect(stdout.output.hasPrefix("<?xml"))
        let file = sandbox.directory.appendingPathComponent("exported.plist")
        #expect(try sandbox.run("export", "com.example.demo", file.path).status == 0)
        let decoded = try PropertyList.decode(try Data(contentsOf: file)) as? [String: Any]
        #expect(PropertyList.isEqual(decoded ?? [:], ["greeting": "hello", "count": 3] as [String: Any]))
        #expect(try sandbox.run("export", "-g", "-").status == 1)
    }

    @Test func importReadsXMLBinaryAndOldStyle() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "stale", "1")
        let xml = try PropertyList.encodeXML(["greeting": "hello", "count": 3] as [String: Any])
        let xmlFile = sandbox.directory.appendingPathComponent("in.plist")
        try xml.write(to: xmlFile)
        #expect(try sandbox.run("import", "com.example.demo", xmlFile.path).status == 0)
        #expect(
            PropertyList.isEqual(
                try sandbox.storedValues("com.example.demo"), ["greeting": "hello", "count": 3] as [String: Any]))

        // Binary, from Foundation's encoder, on standard input.
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["flag": true, "list": [1, 2]] as [String: Any], format: .binary, options: 0
        )
        let fromStdin = try sandbox.run("import", "com.example.demo", "-", input: binary)
        #expect(fromStdin.status == 0, "\(fromStdin)")
        #expect(
            PropertyList.isEqual(
                try sandbox.storedValues("com.example.demo"), ["flag": true, "list": [1, 2]] as [String: Any]))

        let oldStyle = Data("{ name = \"Ada Lovelace\"; tags = (a, b); }".utf8)
        #expect(try sandbox.run("import", "-g", "-", input: oldStyle).status == 0)
        #expect(try sandbox.run("read", "-g", "name").output == "Ada Lovelace\n")
        // Export then import round-trips.
        let exported = try sandbox.run("export", "com.example.demo", "-").outputData
        #expect(try sandbox.run("import", "com.example.copy", "-", input: exported).status == 0)
        #expect(sandbox.bytes("com.example.copy") == sandbox.bytes("com.example.demo"))
    }

    /// 20 MB of text that becomes 80 MB of XML (each `<` is written `&lt;`): the value is refused
    /// with a clear error, and the domain stays readable.
    @Test func anImportTheFileCouldNotHoldFailsClearlyAndLeavesTheDomainReadable() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.demo", "kept", "1")
        let text = Data(("{ big = \"" + String(repeating: "<", count: 20 << 20) + "\"; small = x; }").utf8)
        let imported = try sandbox.run("import", "com.example.demo", "-", input: text)
        #expect(imported.status == 1, "\(imported)")
        #expect(imported.error.contains("\"big\"") && imported.error.contains("64 MB"), "\(imported.error)")
        let read = try sandbox.run("read", "com.example.demo")
        #expect(read.status == 0, "\(read)")
        #expect(!read.output.contains("big"), "\(read.output.prefix(200))")
        #expect(try sandbox.run("write", "com.example.demo", "after", "2").status == 0)
    }

    @Test func helpAndCompletionScripts() throws {
        let sandbox = try CommandSandbox()
        let help = try sandbox.run("--help")
        #expect(help.status == 0)
        for command in [
            "domains", "read", "read-type", "write", "delete", "rename", "find", "export", "import", "watch",
        ] {
            #expect(help.output.contains(command), "\(command) missing from help")
        }
        for shell in ["bash", "zsh", "fish"] {
            let script = try sandbox.run("--generate-completion-script", shell)
            #expect(script.status == 0, "\(script)")
            #expect(script.output.contains("defaults") && script.output.contains("read-type"))
        }
        // What the scripts call for a domain name: the domains in the directory, and NSGlobalDomain.
        try sandbox.run("write", "com.example.one", "k", "1")
        try sandbox.run("write", "org.example.two", "k", "1")
        let completion = try sandbox.run(
            "---completion", "read", "--", "positional@0", "2", "3", "defaults", "read", "com")
        #expect(completion.output == "com.example.one\n", "\(completion)")
        let all = try sandbox.run("---completion", "write", "--", "positional@0", "2", "0", "defaults", "write", "")
        #expect(all.output == "com.example.one\norg.example.two\nNSGlobalDomain\n", "\(all)")
        let writeHelp = try sandbox.run("help", "write")
        #expect(writeHelp.output.contains("-array-add"))
    }
}
