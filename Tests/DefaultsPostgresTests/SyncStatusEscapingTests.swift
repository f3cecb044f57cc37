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
}
