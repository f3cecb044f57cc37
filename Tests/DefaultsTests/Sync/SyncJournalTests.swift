import DefaultsPropertyList
import Foundation
import Testing

@testable import Defaults
@testable import DefaultsSync

/// A suite's sync journal is a file of its own: two journals of one suite stand for two processes
/// syncing it, each with its own entries in memory and the one file between them.
@Suite final class SyncJournalTests {
    let directory: URL
    let suite: FileSuite

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sync-journal-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        suite = FileSuite(fileURL: directory.appendingPathComponent("app.plist"), arguments: [])
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    var journalURL: URL { SyncJournal.journalURL(forSuiteFile: directory.appendingPathComponent("app.plist")) }

    func entry(_ wallTime: Int64, pending: Bool = true) -> SyncJournal.Entry {
        SyncJournal.Entry(
            timestamp: SyncTimestamp(wallTime: wallTime, counter: 0, origin: "a"), digest: "d\(wallTime)",
            isPending: pending)
    }

    /// The journal's entries as its file holds them.
    func onDisk() throws -> SyncJournal.Contents {
        let data = try Data(contentsOf: journalURL)
        guard case .dictionary(let values) = try PropertyList.decodeValue(data) else {
            Issue.record("the journal's file is not a dictionary")
            return SyncJournal.Contents([:])
        }
        return SyncJournal.Contents(values)
    }

    @Test("Entries reach the file at a flush, on top of what another process wrote, and each reads the other's")
    func twoProcessesShareTheFile() throws {
        let first = SyncJournal(for: suite)
        let second = SyncJournal(for: suite)
        first.setEntry(entry(1), forKey: "volume")
        #expect(!FileManager.default.fileExists(atPath: journalURL.path))  // not before a flush
        try first.flush()
        second.setEntry(entry(2), forKey: "theme")
        try second.flush()

        let file = try onDisk()
        #expect(file.entry(forKey: "volume") == entry(1))
        #expect(file.entry(forKey: "theme") == entry(2))
        // The first reads the second's entry once the file changed, and only then.
        #expect(first.entry(forKey: "theme") == nil)
        #expect(first.reloadIfChanged())
        #expect(first.entry(forKey: "theme") == entry(2))
        #expect(!first.reloadIfChanged())
    }

    @Test("A journal flushing again after another process wrote the file keeps that process's entries")
    func aFlushAfterAnotherProcessWroteKeepsItsEntries() throws {
        let first = SyncJournal(for: suite)
        let second = SyncJournal(for: suite)
        first.setEntry(entry(1), forKey: "volume")
        try first.flush()
        // The first's next flush, on the version it wrote itself, takes what it holds.
        first.setEntry(entry(2), forKey: "size")
        try first.flush()
        second.setEntry(entry(3), forKey: "theme")
        try second.flush()
        // Not reloaded in between: the flush itself finds the file changed.
        first.setEntry(entry(4), forKey: "volume")
        try first.flush()

        let file = try onDisk()
        #expect(file.entry(forKey: "volume") == entry(4))
        #expect(file.entry(forKey: "size") == entry(2))
        #expect(file.entry(forKey: "theme") == entry(3))
        #expect(first.entry(forKey: "theme") == entry(3))
    }

    @Test("An entry set here and not flushed stays on top when another process's version is read")
    func unwrittenEntriesSurviveAReload() throws {
        let first = SyncJournal(for: suite)
        let second = SyncJournal(for: suite)
        second.setEntry(entry(1), forKey: "volume")
        try second.flush()
        first.setEntry(entry(5), forKey: "volume")
        #expect(first.reloadIfChanged())
        #expect(first.entry(forKey: "volume") == entry(5))
        try first.flush()
        #expect(try onDisk().entry(forKey: "volume") == entry(5))
        #expect(second.reloadIfChanged() && second.entry(forKey: "volume") == entry(5))
    }

    @Test("A flush that fails keeps the entries for the next one: nothing is lost")
    func failedFlushKeepsEntries() throws {
        let journal = SyncJournal(for: suite)
        // A file where the journal's directory goes: the flush cannot write.
        try Data("in the way".utf8).write(to: journalURL.deletingLastPathComponent())
        journal.setEntry(entry(3), forKey: "volume")
        journal.lastSync = Date(timeIntervalSince1970: 1_000)
        #expect(throws: (any Error).self) { try journal.flush() }
        #expect(journal.hasUnwrittenEntries)

        try FileManager.default.removeItem(at: journalURL.deletingLastPathComponent())
        try journal.flush()
        #expect(!journal.hasUnwrittenEntries)
        #expect(try onDisk().entry(forKey: "volume") == entry(3))
        #expect(try onDisk().lastSync == Date(timeIntervalSince1970: 1_000))
        #expect(SyncJournal(for: suite).entry(forKey: "volume") == entry(3))
    }

    @Test("A damaged journal is read as empty and moved aside by the first flush, not overwritten unseen")
    func damagedJournalIsMovedAside() throws {
        try FileManager.default.createDirectory(
            at: journalURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("<plist><dict><key>cut".utf8).write(to: journalURL)
        let journal = SyncJournal(for: suite)
        #expect(journal.unpushedKeys.isEmpty)
        journal.setEntry(entry(4), forKey: "volume")
        try journal.flush()

        #expect(try onDisk().entry(forKey: "volume") == entry(4))
        let kept = try FileManager.default.contentsOfDirectory(atPath: journalURL.deletingLastPathComponent().path)
        #expect(kept.contains { $0.hasPrefix("app.plist.corrupt-") })
    }

    @Test("Entries set while flushes run all reach the file: none is dropped or replaced by an older one")
    func entriesSetDuringFlushesAreKept() async throws {
        let journal = SyncJournal(for: suite)
        let keys = (0..<40).map { "key\($0)" }
        let rounds = (1...5).map { entry(Int64($0)) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for entry in rounds {
                    for key in keys {
                        journal.setEntry(entry, forKey: key)
                    }
                }
            }
            group.addTask {
                for _ in 0..<20 {
                    try? journal.flush()
                }
            }
        }
        try journal.flush()
        #expect(!journal.hasUnwrittenEntries)
        let file = try onDisk()
        for key in keys {
            #expect(journal.entry(forKey: key) == entry(5))
            #expect(file.entry(forKey: key) == entry(5))
        }
    }

    @Test("Defaults.flushAll (as the exit handler) runs the flush hooks a sync engine adds, until removed")
    func flushAllRunsFlushHooks() throws {
        let journal = SyncJournal(for: suite)
        journal.setEntry(entry(7), forKey: "volume")
        let id = SuiteRegistry.addFlushHook { journal.flushLoggingFailure().map { [$0] } ?? [] }
        // Another test's suite may fail to flush meanwhile: the hooks run whatever the suites do.
        try? Defaults.flushAll()
        #expect(try onDisk().entry(forKey: "volume") == entry(7))

        SuiteRegistry.removeFlushHook(id)
        journal.setEntry(entry(8), forKey: "volume")
        try? Defaults.flushAll()
        #expect(journal.hasUnwrittenEntries)
        #expect(try onDisk().entry(forKey: "volume") == entry(7))
    }

    @Test("Defaults.flushAll throws what a flush hook could not make durable")
    func flushAllThrowsAJournalsFailure() throws {
        let journal = SyncJournal(for: suite)
        // A file where the journal's directory goes: the flush cannot write.
        try Data("in the way".utf8).write(to: journalURL.deletingLastPathComponent())
        journal.setEntry(entry(3), forKey: "volume")
        let id = SuiteRegistry.addFlushHook { journal.flushLoggingFailure().map { [$0] } ?? [] }
        defer { SuiteRegistry.removeFlushHook(id) }
        do {
            try Defaults.flushAll()
            Issue.record("flushAll succeeded though the journal could not be written")
        } catch {
            // Other tests' suites may fail at the same time: look for the journal among the causes.
            let errors = [error] + error.causes
            #expect(errors.contains { $0.kind == .writeFailed && $0.fileURL?.path == journalURL.path })
        }
        #expect(journal.hasUnwrittenEntries)
    }

    @Test("A journal damaged while the program runs is written again from what this process holds")
    func journalDamagedWhileRunningKeepsHeldEntries() throws {
        let journal = SyncJournal(for: suite)
        journal.setEntry(entry(1), forKey: "volume")
        try journal.flush()
        try Data("<plist><dict><key>cut".utf8).write(to: journalURL)
        journal.setEntry(entry(2), forKey: "theme")
        try journal.flush()

        let file = try onDisk()
        #expect(file.entry(forKey: "volume") == entry(1))
        #expect(file.entry(forKey: "theme") == entry(2))
        #expect(journal.entry(forKey: "volume") == entry(1))
        let kept = try FileManager.default.contentsOfDirectory(atPath: journalURL.deletingLastPathComponent().path)
        #expect(kept.contains { $0.hasPrefix("app.plist.corrupt-") })
    }

    @Test("The journal of a suite kept in memory writes no file")
    func inMemorySuiteHasNoFile() throws {
        let name = "memory-\(UUID().uuidString)"
        let journal = SyncJournal(for: InMemorySuite(name: name))
        journal.setEntry(entry(6), forKey: "volume")
        #expect(journal.entry(forKey: "volume") == entry(6))
        #expect(!journal.hasUnwrittenEntries)
        try journal.flush()
        #expect(journal.unpushedKeys == ["volume"])
        let wouldBe = SyncJournal.journalURL(forSuiteFile: FileSuite.fileURL(forName: name))
        #expect(!FileManager.default.fileExists(atPath: wouldBe.path))
    }
}
