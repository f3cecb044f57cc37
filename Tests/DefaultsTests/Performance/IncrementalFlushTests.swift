@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

/// A flush encodes only the entries that changed since the last one; the file must still be
/// exactly the full encoding of the suite's values, whatever happened in between.
@Suite("Incremental flush")
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
        let child = try ChildProcess.run(["filesuite-set", directory.path, "merged", "theirs", "hello"])
        #expect(child.status == 0, "\(child.error)")
        suite.set(100, forKey: "mine3")
        try suite.flush()
        let stored = try directory.storedValues("merged")
        #expect(stored["theirs"] as? String == "hello")
        #expect(stored["mine3"] as? Int == 100)
        #expect(stored.count == 21)
        try expectFileIsFullEncoding(suite, directory, "merged")
    }
}
