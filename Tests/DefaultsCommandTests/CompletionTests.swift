import Foundation
import TestSupport
import Testing

/// Shell completion, through the protocol the generated scripts use
/// (`defaults ---completion <command> -- positional@0 <word index> <cursor> <words…>`), and once
/// through the bash script itself.
@Suite("completion", .mayBlock)
struct CompletionTests {
    /// A sandbox with two domains, one of them with three keys.
    private func sandboxWithDomains() throws -> CommandSandbox {
        let sandbox = try CommandSandbox()
        let write = try sandbox.run("write", "com.example.app", "{ alpha = 1; beta = 2; gamma = 3; }")
        #expect(write.status == 0, "\(write)")
        #expect(try sandbox.run("write", "org.other", "x", "1").status == 0)
        return sandbox
    }

    /// The candidates for the last of `words` (what follows `defaults`), with the cursor at its end.
    private func complete(_ sandbox: CommandSandbox, _ words: String...) throws -> [String] {
        let command = words[0]
        let line = [CommandSandbox.executable] + words
        let result = try sandbox.run(
            ["---completion", command, "--", "positional@0", "\(line.count - 1)", "\(words.last?.count ?? 0)"] + line)
        #expect(result.status == 0, "\(result)")
        #expect(result.error.isEmpty, "\(result)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test("The first argument completes to domain names")
    func domains() throws {
        let sandbox = try sandboxWithDomains()
        #expect(try complete(sandbox, "read", "") == ["com.example.app", "org.other", "NSGlobalDomain"])
        #expect(try complete(sandbox, "delete", "com.") == ["com.example.app"])
    }

    @Test(
        "After a domain, the commands that take a key complete its keys",
        arguments: ["read", "delete", "write", "rename", "read-type", "watch"])
    func keysAfterDomain(command: String) throws {
        let sandbox = try sandboxWithDomains()
        #expect(try complete(sandbox, command, "com.example.app", "") == ["alpha", "beta", "gamma"])
        #expect(try complete(sandbox, command, "com.example.app", "b") == ["beta"])
    }

    @Test("Options before the domain are skipped; -g and --path choose the domain themselves")
    func domainOptions() throws {
        let sandbox = try sandboxWithDomains()
        #expect(try complete(sandbox, "read", "--json", "com.example.app", "g") == ["gamma"])
        #expect(try sandbox.run("write", "-g", "globalKey", "1").status == 0)
        #expect(try complete(sandbox, "read", "-g", "") == ["globalKey"])
        let file = sandbox.fileURL("org.other").path
        #expect(try complete(sandbox, "delete", "--path", file, "") == ["x"])
    }

    @Test("Nothing after the key, and nothing for a domain that does not exist or cannot be read")
    func nothingToOffer() throws {
        let sandbox = try sandboxWithDomains()
        #expect(try complete(sandbox, "read", "com.example.app", "alpha", "").isEmpty)
        #expect(try complete(sandbox, "read", "com.example.missing", "").isEmpty)
        try Data("not a property list".utf8).write(to: sandbox.fileURL("com.example.broken"))
        #expect(try complete(sandbox, "read", "com.example.broken", "").isEmpty)
    }

    @Test("export and import complete file paths, directories with a slash, and - after the domain")
    func filePaths() throws {
        let sandbox = try sandboxWithDomains()
        let folder = sandbox.directory.appendingPathComponent("exports", isDirectory: true)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("old"), withIntermediateDirectories: true)
        try Data().write(to: folder.appendingPathComponent("app.plist"))
        try Data().write(to: folder.appendingPathComponent(".hidden.plist"))
        for command in ["export", "import"] {
            #expect(
                try complete(sandbox, command, "com.example.app", folder.path + "/")
                    == [folder.path + "/app.plist", folder.path + "/old/"])
            #expect(
                try complete(sandbox, command, "com.example.app", folder.path + "/a") == [folder.path + "/app.plist"])
            #expect(
                try complete(sandbox, command, "com.example.app", folder.path + "/.") == [
                    folder.path + "/.hidden.plist"
                ])
            #expect(try complete(sandbox, command, "com.example.app", "-") == ["-"])
            #expect(try complete(sandbox, command, "-g", folder.path + "/o") == [folder.path + "/old/"])
        }
    }

    @Test("A domain, key or file whose name holds a control is not offered; its line break forges no candidate")
    func namesWithControls() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(
            ["plain": 1, "title\u{1B}]0;pwned\u{07}": 2, "erase\u{1B}[2K": 3, "two\nforged": 4, "csi\u{9B}2J": 5],
            as: "com.example.app")
        try sandbox.store(["x": 1], as: "com.example.\u{1B}[2Kforged")
        #expect(try complete(sandbox, "read", "com.example.app", "") == ["plain"])
        #expect(try complete(sandbox, "read", "") == ["com.example.app", "NSGlobalDomain"])
        let folder = sandbox.directory.appendingPathComponent("exports", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["app.plist", "title\u{1B}]0;pwned\u{07}.plist", "two\nforged.plist"] {
            try Data().write(to: folder.appendingPathComponent(name))
        }
        #expect(try complete(sandbox, "export", "com.example.app", folder.path + "/") == [folder.path + "/app.plist"])
    }

    @Test(
        "The generated bash script completes keys after a domain",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash"), "needs bash"))
    func bashScript() throws {
        let sandbox = try sandboxWithDomains()
        let script = try sandbox.run("--generate-completion-script", "bash")
        #expect(script.status == 0)
        let scriptURL = sandbox.directory.appendingPathComponent("completion.bash")
        try script.outputData.write(to: scriptURL)
        let executable = CommandSandbox.executable
        // What bash sets up when the user presses TAB after `defaults delete com.example.app `.
        let driver = """
            source "$1"
            COMP_WORDS=("$2" delete com.example.app '')
            COMP_CWORD=3
            COMP_LINE="$2 delete com.example.app "
            COMP_POINT=${#COMP_LINE}
            _defaults "$2" '' com.example.app
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let completion = try ChildProcess.run(
            "/bin/bash", ["-c", driver, "bash", scriptURL.path, executable], environment: sandbox.environment)
        #expect(completion.status == 0, "\(completion)")
        #expect(completion.output.split(separator: "\n").sorted() == ["alpha", "beta", "gamma"])
    }
}
