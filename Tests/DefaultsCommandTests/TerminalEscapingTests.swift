import DefaultsPropertyList
import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// Control characters planted in a schema (a description, a Swift type name, a default, a choice),
/// a stored value and a domain's file name reach the person running `defaults` escaped, whether
/// its output is a terminal (a pseudo-terminal, through Python's `pty`) or a pipe; only a
/// value printed on its own goes to a pipe as its bytes, for scripts; JSON holds them as `\u`
/// escapes.
@Suite(
    "terminal controls in what the defaults command prints", .mayBlock,
    .enabled(if: TerminalControlText.canRunOnTerminal, "needs python3"))
struct TerminalEscapingTests {
    static let domain = "com.example.hostile"
    static let hostile = TerminalControlText.hostile
    static let shown = TerminalControlText.shown

    /// A sandbox whose domain's schema and values hold ``hostile`` everywhere text can be.
    static func plantedSandbox() throws -> CommandSandbox {
        let sandbox = try CommandSandbox()
        let schema = DomainSchema(
            domain: domain,
            keys: [
                KeySchema(
                    name: "note", type: .string, swiftType: "Swift.String" + hostile,
                    defaultValue: .string("default" + hostile), description: "A note." + hostile),
                KeySchema(
                    name: "mood", type: .string, swiftType: "Swift.String", defaultValue: .string("calm"),
                    description: "The mood.", allowedValues: .choices([.string("calm"), .string("cross" + hostile)])),
            ])
        let schemas = sandbox.dataHome.appendingPathComponent("defaults/schemas", isDirectory: true)
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        try JSONEncoder().encode(schema).write(to: schemas.appendingPathComponent("\(domain).json"))
        try sandbox.store(["note": "value" + hostile, "mood": "calm"], as: domain)
        return sandbox
    }

    /// Runs `defaults arguments…` with a pseudo-terminal as its standard output and error
    /// (``TerminalControlText/runOnTerminal(_:_:environment:)``).
    static func runOnTerminal(_ sandbox: CommandSandbox, _ arguments: [String]) throws -> ChildProcess.Result {
        try TerminalControlText.runOnTerminal(CommandSandbox.executable, arguments, environment: sandbox.environment)
    }

    static func rawControls(_ data: Data) -> [String] {
        TerminalControlText.rawControls(in: data)
    }

    @Test(
        "Descriptions, type names, defaults, choices and values in lines: escaped, to a terminal as to a pipe",
        arguments: [
            ["keys", domain], ["describe", domain, "note"], ["explain", domain, "note"], ["range", domain, "mood"],
        ])
    func linesEscaped(arguments: [String]) throws {
        let sandbox = try Self.plantedSandbox()
        let terminal = try Self.runOnTerminal(sandbox, arguments)
        let pipe = try sandbox.run(arguments)
        #expect(terminal.status == 0 && pipe.status == 0, "\(terminal)\n\(pipe)")
        #expect(Self.rawControls(terminal.outputData).isEmpty, "\(terminal)")
        #expect(Self.rawControls(pipe.outputData).isEmpty, "\(pipe)")
        #expect(terminal.output.contains(Self.shown), "\(terminal)")
        #expect(pipe.output == terminal.output)
    }

    @Test("`keys` and `describe` show every planted text, escaped in place on its line")
    func keysAndDescribeShowIt() throws {
        let sandbox = try Self.plantedSandbox()
        let keys = try Self.runOnTerminal(sandbox, ["keys", Self.domain]).output.split(separator: "\n")
        #expect(
            keys.contains(
                "note (string, Swift.String\(Self.shown)) = value\(Self.shown), default default\(Self.shown)"[...]),
            "\(keys)")
        #expect(keys.contains("    A note.\(Self.shown)"[...]), "\(keys)")
        #expect(keys.contains { $0.hasPrefix("mood (") && $0.hasSuffix("cross\(Self.shown)") }, "\(keys)")

        let describe = try sandbox.run("describe", Self.domain, "note").output.split(separator: "\n")
        #expect(
            Array(describe.prefix(4)) == [
                "A note.\(Self.shown)", "type: string (Swift.String\(Self.shown))", "default: default\(Self.shown)",
                "value: value\(Self.shown)",
            ], "\(describe)")
    }

    @Test("`read DOMAIN KEY`: the value's own bytes to a pipe, escaped to a terminal")
    func readKey() throws {
        let sandbox = try Self.plantedSandbox()
        let pipe = try sandbox.run("read", Self.domain, "note")
        #expect(pipe.status == 0, "\(pipe)")
        #expect(pipe.outputData == Data(("value" + Self.hostile + "\n").utf8))

        let terminal = try Self.runOnTerminal(sandbox, ["read", Self.domain, "note"])
        #expect(terminal.status == 0, "\(terminal)")
        #expect(terminal.output == "value" + Self.shown + "\n")
    }

    @Test("A multi-line value keeps its lines on a terminal; its carriage return is escaped")
    func readKeyKeepsLines() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["text": "first\n\tsecond\rthird"], as: Self.domain)
        let terminal = try Self.runOnTerminal(sandbox, ["read", Self.domain, "text"])
        #expect(terminal.output == "first\n\tsecond\\rthird\n", "\(terminal)")
    }

    @Test(
        "Old-style text of a domain, `find` and `export` hold no raw control on a terminal",
        arguments: [["read", domain], ["find", "forged"], ["export", domain, "-"], ["read"]])
    func valuesOnATerminal(arguments: [String]) throws {
        let sandbox = try Self.plantedSandbox()
        let terminal = try Self.runOnTerminal(sandbox, arguments)
        #expect(terminal.status == 0, "\(terminal)")
        #expect(Self.rawControls(terminal.outputData).isEmpty, "\(terminal)")
        #expect(terminal.output.contains("forged"), "\(terminal)")
    }

    @Test("`export DOMAIN -` to a pipe is the property list's bytes")
    func exportToAPipe() throws {
        let sandbox = try Self.plantedSandbox()
        let pipe = try sandbox.run("export", Self.domain, "-")
        #expect(pipe.status == 0, "\(pipe)")
        let values = try PropertyList.decode(pipe.outputData) as? [String: Any]
        #expect(values?["note"] as? String == "value" + Self.hostile)
    }

    @Test(
        "JSON holds every control as a \\u escape and reads back as the value",
        arguments: [
            ["read", "--json", domain, "note"], ["read", "--json", domain], ["read", "--json"],
            ["find", "--json", "forged"], ["explain", "--json", domain, "note"], ["json-schema", domain],
        ])
    func json(arguments: [String]) throws {
        let sandbox = try Self.plantedSandbox()
        for result in [try sandbox.run(arguments), try Self.runOnTerminal(sandbox, arguments)] {
            #expect(result.status == 0, "\(result)")
            #expect(Self.rawControls(result.outputData).isEmpty, "\(result)")
            let json = try JSONSerialization.jsonObject(with: result.outputData, options: .fragmentsAllowed)
            let text = String(
                decoding: try JSONSerialization.data(withJSONObject: json, options: .fragmentsAllowed), as: UTF8.self)
            #expect(text.contains("forged"))
            if arguments == ["read", "--json", Self.domain, "note"] {
                #expect(json as? String == "value" + Self.hostile)
            }
        }
    }

    @Test("A domain's file name is escaped by `domains`, `find` and `read`, and in JSON")
    func fileNames() throws {
        let sandbox = try CommandSandbox()
        let name = "com.example." + Self.hostile
        try sandbox.store(["greeting": "hello"], as: name)
        for arguments in [["domains"], ["find", "greeting"]] {
            for result in [try sandbox.run(arguments), try Self.runOnTerminal(sandbox, arguments)] {
                #expect(result.status == 0, "\(result)")
                #expect(Self.rawControls(result.outputData).isEmpty, "\(result)")
                #expect(result.output.contains("com.example." + Self.shown), "\(result)")
            }
        }
        for arguments in [["domains", "--json"], ["find", "--json", "greeting"]] {
            let result = try sandbox.run(arguments)
            #expect(Self.rawControls(result.outputData).isEmpty, "\(result)")
            #expect(result.output.contains(#"\u001b]52;c;"#) && result.output.contains(#"\u202e"#), "\(result)")
        }
    }

    @Test("An error quoting a key is escaped on standard error")
    func errors() throws {
        let sandbox = try Self.plantedSandbox()
        let result = try sandbox.run("read", Self.domain, "missing" + Self.hostile)
        #expect(result.status == 1, "\(result)")
        #expect(Self.rawControls(result.errorData).isEmpty, "\(result)")
        #expect(result.error.contains("missing" + Self.shown), "\(result)")
    }

    @Test("A line break in what an error quotes is shown, never obeyed: no forged line on standard error")
    func errorsForgeNoLine() throws {
        let sandbox = try CommandSandbox()
        let forged = "calm\nwarning: the administrator reset every key"
        let schema = DomainSchema(
            domain: Self.domain,
            keys: [
                KeySchema(
                    name: "mood", type: .string, swiftType: "Swift.String", defaultValue: .string("calm"),
                    allowedValues: .choices([.string("calm"), .string(forged)]))
            ])
        let schemas = sandbox.dataHome.appendingPathComponent("defaults/schemas", isDirectory: true)
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        try JSONEncoder().encode(schema).write(to: schemas.appendingPathComponent("\(Self.domain).json"))
        let result = try sandbox.run("write", Self.domain, "mood", "-string", "cross")
        #expect(result.status == 1, "\(result)")
        let lines = result.error.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("warning: the administrator") }, "\(result)")
        #expect(result.error.contains(#"calm\nwarning: the administrator"#), "\(result)")
        // The command's own second line stays a line of its own.
        let usage = try sandbox.run("delete", "com.example.none-such")
        #expect(usage.error.split(separator: "\n").contains("Defaults have not been changed."), "\(usage)")
    }

    @Test(
        "The parser's report of an argument it rejects quotes it escaped, to a terminal as to a pipe; exit status 64",
        arguments: [["read", "--" + hostile], ["domains", hostile], ["--generate-completion-script", hostile]])
    func rejectedArguments(arguments: [String]) throws {
        let sandbox = try CommandSandbox()
        let terminal = try Self.runOnTerminal(sandbox, arguments)
        let pipe = try sandbox.run(arguments)
        #expect(terminal.status == 64 && pipe.status == 64, "\(terminal)\n\(pipe)")
        #expect(Self.rawControls(terminal.outputData).isEmpty, "\(terminal)")
        #expect(Self.rawControls(pipe.errorData).isEmpty, "\(pipe)")
        #expect(pipe.outputData.isEmpty, "\(pipe)")
        for report in [terminal.output, pipe.error] {
            #expect(report.hasPrefix("Error: ") && report.contains(Self.shown), "\(report.debugDescription)")
        }
    }

    @Test("A line break in a rejected argument is shown, never obeyed: no forged line on standard error")
    func rejectedArgumentForgesNoLine() throws {
        let sandbox = try CommandSandbox()
        let result = try sandbox.run("read", "--x\nError: forged")
        #expect(result.status == 64, "\(result)")
        let lines = result.error.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("Error: forged") }, "\(result)")
        #expect(result.error.contains(#"'--x\nError: forged'"#), "\(result)")
        // The parser's own lines stay lines.
        #expect(lines.contains { $0.hasPrefix("Usage: defaults read") }, "\(result)")
    }
}
