import DefaultsPropertyList
import Foundation
import Testing

@testable import Defaults
@testable import DefaultsSync

/// What `defaults-sync status` counts from a journal on disk, with no engine: the same rule as the
/// engine's status (`SyncRules.standing`), from what the journal and the administrator's files say.
@Suite final class SyncJournalSummaryTests {
    let root: URL
    let directory: URL
    let administrator: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "journal-summary-\(UUID().uuidString)", isDirectory: true)
        directory = root.appendingPathComponent("config", isDirectory: true)
        administrator = root.appendingPathComponent("xdg", isDirectory: true)
        for made in [
            directory.appendingPathComponent(".defaults-sync"), administrator.appendingPathComponent("managed"),
        ] {
            try FileManager.default.createDirectory(
                at: made, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    func write(_ values: [String: Any], to url: URL) throws {
        let data = try PropertyListSerialization.data(fromPropertyList: values, format: .xml, options: 0)
        try data.write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    func entry(pending: Bool, refused: String? = nil) -> [String: Any] {
        var entry: [String: Any] = [
            "timestamp": SyncTimestamp(wallTime: 1_000, counter: 0, origin: "a").description, "digest": "d",
            "pending": pending,
        ]
        entry["refused"] = refused
        return entry
    }

    @Test("A refused change and one of a managed key are set aside, not pending, as the engine counts them")
    func setAsideChangesAreNotPending() throws {
        try write(
            [
                "changed": entry(pending: true), "refused": entry(pending: true, refused: "too long"),
                "managed": entry(pending: true), "pushed": entry(pending: false),
            ],
            to: directory.appendingPathComponent(".defaults-sync/app.plist"))
        try write(["managed": "enforced"], to: administrator.appendingPathComponent("managed/app.plist"))

        let summaries = SyncJournal.summaries(in: directory, administratorDirectories: [administrator])
        let summary = try #require(summaries.first)
        #expect(summaries.count == 1 && summary.suite == "app" && summary.problem == nil)
        #expect(summary.pendingChanges == 1)
        #expect(summary.refusedChanges == 1)
        #expect(summary.managedChanges == 1)

        // Once the administrator stops managing the key, its change is pending again.
        try FileManager.default.removeItem(at: administrator.appendingPathComponent("managed/app.plist"))
        let freed = try #require(
            SyncJournal.summaries(in: directory, administratorDirectories: [administrator]).first)
        #expect(freed.pendingChanges == 2 && freed.managedChanges == 0)
    }
}
