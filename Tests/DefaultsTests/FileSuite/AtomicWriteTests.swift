@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The durable replace under every flush: a temporary file in the suite's directory, written and
/// synced, renamed over the file, and the directory synced. A crash at any moment leaves the old
/// file or the new one, never a part of one.
@Suite("Atomic file write", .mayBlock)
struct AtomicWriteTests {
    /// What a writer killed in the middle of its write leaves: the old file whole, and its
    /// temporary file cut short. The partial file is never read, and the next flush removes it.
    @Test func aWriterKilledMidWriteLeavesTheOldFile() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let old = try PropertyList.encodeXML(["kept": "old", "count": 1])
        try old.write(to: directory.fileURL("partial"))
        // A process ID above any the kernel hands out (at most 2^22): the writer is gone.
        let partialPath = directory.path + "/.partial.plist.tmp-2147483647-00000000deadbeef"
        let newer = try PropertyList.encodeXML(["kept": "new", "count": 2])
        try newer.prefix(newer.count / 2).write(to: URL(fileURLWithPath: partialPath))

        let suite = directory.suite("partial")
        #expect(suite.object(forKey: "kept") as? String == "old")
        #expect(suite.object(forKey: "count") as? Int == 1)
        #expect(suite.problems.isEmpty)

        suite.set(3, forKey: "count")
        try suite.flush()
        let stored = try directory.storedValues("partial")
        #expect(stored["kept"] as? String == "old")
        #expect(stored["count"] as? Int == 3)
        #expect(try directory.files(startingWith: ".partial.plist.tmp-").isEmpty)
    }

    /// A suite whose directory is reached through a link (a configuration directory linked from
    /// elsewhere) writes in the directory the link points to, and leaves nothing behind.
    @Test func aDirectoryReachedThroughALinkIsWrittenInPlace() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let real = directory.url.appendingPathComponent("real", isDirectory: true)
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        let linked = directory.url.appendingPathComponent("linked", isDirectory: true)
        try #require(symlink(real.path, linked.path) == 0)

        let suite = FileSuite(name: "through", directory: linked, arguments: [])
        for round in 0..<3 {
            suite.set(round, forKey: "round")
            try suite.flush()
        }
        let data = try Data(contentsOf: real.appendingPathComponent("through.plist"))
        #expect((try PropertyList.decode(data) as? [String: Any])?["round"] as? Int == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path).filter { $0.contains(".tmp-") }.isEmpty)
        #expect(try fileSuitePermissions(of: real.appendingPathComponent("through.plist").path) == 0o600)
        // A new suite object reads what was written, from the same path.
        #expect(FileSuite(name: "through", directory: linked, arguments: []).object(forKey: "round") as? Int == 2)
    }

    /// After each flush the suite holds the version it wrote: a write by another process right
    /// after it is still seen as a change (the suite did not take the newer file for its own).
    @Test func aWriteByAnotherProcessAfterAFlushIsRead() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("after")
        for round in 0..<5 {
            suite.set(round, forKey: "mine")
            try suite.flush()
            let child = try TestHelper.run(["filesuite-set", directory.path, "after", "theirs", "value \(round)"])
            #expect(child.status == 0, "\(child.error)")
            suite.reload()
            #expect(suite.object(forKey: "theirs") as? String == "value \(round)")
            #expect(suite.object(forKey: "mine") as? Int == round)
        }
    }
}
