import Foundation
import TestSupport
import Testing

/// `defaults-sync status` prints the suites' names from the journals' file names, which any
/// program sharing the directory can choose: their controls reach the person escaped, in text and
/// in JSON. No store is needed: the journals are reported without one.
@Suite(
    "defaults-sync status escapes the journals' names",
    .enabled(if: FileManager.default.isExecutableFile(atPath: StatusCommand.path)), .mayBlock)
struct SyncStatusEscapingTests {
    @Test func journalNamesAreEscaped() throws {
        let directory = try TemporaryDirectory()
        let configuration = directory.machine("a")
        let journals = configuration.appendingPathComponent(".defaults-sync", isDirectory: true)
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let emptyJournal = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict/></plist>"#
        try Data(emptyJournal.utf8).write(
            to: journals.appendingPathComponent("suite" + TerminalControlText.hostile + ".plist"))
        let environment = ["XDG_CONFIG_HOME": configuration.path]

        let text = try StatusCommand.run(environment)
        #expect(TerminalControlText.rawControls(in: text.outputData).isEmpty, "\(text)")
        #expect(
            text.output.contains("suite" + TerminalControlText.shown + ": 0 pending change(s), last sync never"),
            "\(text)")

        let (result, report) = try StatusCommand.json(environment)
        #expect(TerminalControlText.rawControls(in: result.outputData).isEmpty, "\(result)")
        #expect(report.suites.map(\.suite) == ["suite" + TerminalControlText.hostile], "\(result)")
    }

    @Test(
        "The parser's report of an argument it rejects quotes it escaped; exit status 64",
        arguments: [["--timeout", TerminalControlText.hostile], ["--" + TerminalControlText.hostile]])
    func rejectedArguments(arguments: [String]) throws {
        var results = [try StatusCommand.run([:], arguments: arguments)]
        if TerminalControlText.canRunOnTerminal {
            var terminal = try TerminalControlText.runOnTerminal(StatusCommand.path, ["status"] + arguments)
            // A terminal receives standard error and output together.
            (terminal.errorData, terminal.outputData) = (terminal.outputData, Data())
            results.append(terminal)
        }
        for result in results {
            #expect(result.status == 64, "\(result)")
            #expect(TerminalControlText.rawControls(in: result.errorData).isEmpty, "\(result)")
            #expect(result.outputData.isEmpty, "\(result)")
            #expect(result.error.hasPrefix("Error: ") && result.error.contains(TerminalControlText.shown), "\(result)")
        }
    }

    @Test("A line break in a rejected argument forges no line; the command's help still goes to standard output")
    func rejectedArgumentForgesNoLine() throws {
        let result = try StatusCommand.run([:], arguments: ["--timeout", "x\nError: forged"])
        #expect(result.status == 64, "\(result)")
        let lines = result.error.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("Error: forged") }, "\(result)")
        #expect(result.error.contains(#"'x\nError: forged'"#), "\(result)")
        #expect(lines.contains { $0.hasPrefix("Usage: defaults-sync status") }, "\(result)")

        let help = try StatusCommand.run([:], arguments: ["--help"])
        #expect(help.status == 0 && help.error.isEmpty, "\(help)")
        #expect(help.output.contains("--timeout <timeout>"), "\(help)")
    }
}
