@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// A flush encodes only the entries that changed since the last one; the file must still be
/// exactly the full encoding of the suite's values, whatever happened in between.
@Suite("Incremental flush", .mayBlock)
struct IncrementalFlushTests {
    /// The file's bytes against a full encoding of what the suite holds.
    private func expectFileIsFullEncoding(
        _ suite: FileSuite, _ directory: FileSuiteTemporaryDirectory, _ name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let file = try Data(contentsOf: directory.fileURL(name))
        let full = try PropertyList.encodeXML(suite.persistentValues())
        #expect(
            String(decoding: file, as: UTF8.self) == String(decoding: full, as: UTF8.self),
            sourceLocation: sourceLocation)
    }

    @Test func everyFlushWritesTheFullEncoding() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("incremental")
        for index in 0..<50 {
            suite.set(index, forKey: "key\(index)")
        }
        try suite.flush()
        try expectFileIsFullEncoding(suite, directory, "incremental")
        for round in 0..<20 {
            suite.set("round \(round)", forKey: "key\(round)")  // a value of another kind
            suite.set(nil, forKey: "key\(49 - round)")  // a key removed
            suite.set([round, round + 1], forKey: "added\(round)")  // a key added
            suite.set(-0.0, forKey: "zero")  // equal to 0.0, written differently
            try suite.flush()
            try expectFileIsFullEncoding(suite, directory, "incremental")
            suite.set(0.0, forKey: "zero")
            try suite.flush()
            try expectFileIsFullEncoding(suite, directory, "incremental")
        }
        suite.removeAll()
        try suite.flush()
        try expectFileIsFullEncoding(suite, directory, "incremental")
    }

    /// Another process's write between two flushes of this one is merged, and the file is the
    /// full encoding of the merged values.
    @Test func aFlushAfterAnotherProcessesWriteKeepsItsKeys() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("merged")
        for index in 0..<20 {
            suite.set(index, forKey: "mine\(index)")
        }
        try suite.flush()
        let child = try TestHelper.run(["filesuite-set", directory.path, "merged", "theirs", "hello"])
        #expect(child.status == 0, "\(child.error)")
        suite.set(100, forKey: "mine3")
        try suite.flush()
        let stored = try directory.storedValues("merged")
        #expect(stored["theirs"] as? String == "hello")
        #expect(stored["mine3"] as? Int == 100)
        #expect(stored.count == 21)
        try expectFileIsFullEncoding(suite, directory, "merged")
    }

    /// Another process changes one of this suite's keys (the key count stays the same) and the
    /// watcher reloads the file: the next flush, of one more change, keeps the other process's value.
    @Test func aFlushAfterAReloadKeepsAnotherProcessesChange() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("reloaded")
        for index in 0..<20 {
            suite.set(index, forKey: "mine\(index)")
        }
        try suite.flush()
        let child = try TestHelper.run(["filesuite-set", directory.path, "reloaded", "mine7", "theirs"])
        #expect(child.status == 0, "\(child.error)")
        try await waitUntil { suite.object(forKey: "mine7") as? String == "theirs" }
        suite.set(100, forKey: "mine3")
        try suite.flush()
        let stored = try directory.storedValues("reloaded")
        #expect(stored["mine7"] as? String == "theirs")
        #expect(stored["mine3"] as? Int == 100)
        #expect(stored.count == 20)
        try expectFileIsFullEncoding(suite, directory, "reloaded")
    }

    /// Another process changes one of this suite's keys while this one has a change pending: the
    /// flush merges the file and writes both.
    @Test func aFlushMergingAnotherProcessesChangeOfTheSameKeys() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("merged-same", coalescingDelay: .seconds(3_600))
        for index in 0..<20 {
            suite.set(index, forKey: "mine\(index)")
        }
        try suite.flush()
        suite.set(100, forKey: "mine3")
        let child = try TestHelper.run(["filesuite-set", directory.path, "merged-same", "mine7", "theirs"])
        #expect(child.status == 0, "\(child.error)")
        try suite.flush()
        let stored = try directory.storedValues("merged-same")
        #expect(stored["mine7"] as? String == "theirs")
        #expect(stored["mine3"] as? Int == 100)
        try expectFileIsFullEncoding(suite, directory, "merged-same")
    }

    /// After `removeAll`, keys set again (as many as before, some the same) are written whole.
    @Test func aFlushAfterRemoveAll() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("cleared")
        for index in 0..<20 {
            suite.set(index, forKey: "key\(index)")
        }
        try suite.flush()
        suite.removeAll()
        for index in 0..<20 {
            suite.set(index % 2 == 0 ? index : -index, forKey: "key\(index)")
        }
        try suite.flush()
        try expectFileIsFullEncoding(suite, directory, "cleared")
        suite.set("one change", forKey: "key5")
        try suite.flush()
        try expectFileIsFullEncoding(suite, directory, "cleared")
        #expect(try directory.storedValues("cleared")["key5"] as? String == "one change")
    }

    /// `modify` writes through the same path; the flushes after it are still whole.
    @Test func aFlushAfterModify() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("modified")
        for index in 0..<20 {
            suite.set(index, forKey: "key\(index)")
        }
        try suite.flush()
        suite.modify(forKey: "key4") { $0 = "modified" }
        try expectFileIsFullEncoding(suite, directory, "modified")
        suite.modify(forKey: "added") { $0 = [1, 2] }
        suite.set(nil, forKey: "key9")
        try suite.flush()
        try expectFileIsFullEncoding(suite, directory, "modified")
        suite.set(8.5, forKey: "key8")
        suite.modify(forKey: "key4") { $0 = 4 }
        try expectFileIsFullEncoding(suite, directory, "modified")
        let stored = try directory.storedValues("modified")
        #expect(stored["key8"] as? Double == 8.5)
        #expect(stored["key4"] as? Int == 4)
    }

    /// Whether this process may mount a small tmpfs (root with the capability), to fill a disk.
    static let canMountTmpfs: Bool = {
        guard getuid() == 0, let directory = try? FileSuiteTemporaryDirectory() else { return false }
        guard fileSuiteShell("mount -t tmpfs -o size=64k tmpfs '\(directory.path)' 2>/dev/null") == 0 else {
            return false
        }
        return fileSuiteShell("umount '\(directory.path)'") == 0
    }()

    /// A write that fails once the new document is encoded (a full disk) leaves the values in
    /// memory; the flushes after it are still whole.
    @Test(.enabled(if: canMountTmpfs, "needs root to mount a small tmpfs"))
    func aFlushAfterAFailedWrite() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let mountPoint = directory.url.appendingPathComponent("tiny", isDirectory: true)
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: false)
        try #require(fileSuiteShell("mount -t tmpfs -o size=64k,mode=0700 tmpfs '\(mountPoint.path)'") == 0)
        defer { fileSuiteShell("umount '\(mountPoint.path)'") }
        let suite = FileSuite(name: "full", directory: mountPoint, arguments: [])
        let fileURL = mountPoint.appendingPathComponent("full.plist")
        func expectFileIsFullEncoding(sourceLocation: SourceLocation = #_sourceLocation) throws {
            let file = try Data(contentsOf: fileURL)
            let full = try PropertyList.encodeXML(suite.persistentValues())
            #expect(
                String(decoding: file, as: UTF8.self) == String(decoding: full, as: UTF8.self),
                sourceLocation: sourceLocation)
        }
        for index in 0..<20 {
            suite.set(index, forKey: "key\(index)")
        }
        try suite.flush()
        suite.set(Data(repeating: 7, count: 200_000), forKey: "key5")  // too big for the disk
        #expect(throws: DefaultsError.self) { try suite.flush() }
        #expect((try? PropertyList.decode(Data(contentsOf: fileURL)) as? [String: Any])?["key5"] as? Int == 5)
        suite.set("small again", forKey: "key5")
        suite.set(66, forKey: "key6")
        try suite.flush()
        try expectFileIsFullEncoding()
        suite.set(77, forKey: "key7")
        try suite.flush()
        try expectFileIsFullEncoding()
    }
}
