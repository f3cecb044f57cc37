@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

@Suite("FileSuite basics", .mayBlock)
struct FileSuiteBasicsTests {
    @Test func writesAreVisibleAtOnceAndDurableAfterFlush() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(5, forKey: "count")
        suite.set("hello", forKey: "greeting")
        #expect(suite.object(forKey: "count") as? Int == 5)
        try suite.flush()
        let stored = try directory.storedValues()
        #expect(stored["count"] as? Int == 5)
        #expect(stored["greeting"] as? String == "hello")

        let reopened = directory.suite()
        #expect(reopened.object(forKey: "greeting") as? String == "hello")
    }

    @Test func backgroundWriteHappensWithoutFlush() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(1, forKey: "a")
        try await waitUntil("the value in the file") { ((try? directory.storedValues())?["a"] as? Int) == 1 }
    }

    @Test func manyWritesAreCoalescedIntoFewFileWrites() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        for index in 0..<10_000 {
            suite.set(index, forKey: "key\(index % 100)")
        }
        try suite.flush()
        // P4: 10,000 writes over 100 keys cost a handful of file writes (one on an idle machine:
        // the benchmark's target; on a busy one the writes take longer than the suite's delay).
        #expect(suite.writeCount <= 20)
        let stored = try directory.storedValues()
        #expect(stored.count == 100)
        #expect(stored["key99"] as? Int == 9_999)
    }

    @Test func flushWithNothingPendingDoesNotWrite() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        try suite.flush()
        #expect(suite.writeCount == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.fileURL().path))
    }

    @Test func filesAre0600AndDirectoriesAre0700() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let nested = directory.url.appendingPathComponent("config/deeper", isDirectory: true)
        let suite = FileSuite(name: "perms", directory: nested, arguments: [])
        suite.set(true, forKey: "flag")
        try suite.flush()
        #expect(try fileSuitePermissions(of: nested.appendingPathComponent("perms.plist").path) == 0o600)
        #expect(try fileSuitePermissions(of: nested.path) == 0o700)
        #expect(try fileSuitePermissions(of: nested.deletingLastPathComponent().path) == 0o700)
    }

    @Test func removeAllAndRemovalReachTheFile() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(1, forKey: "a")
        suite.set(2, forKey: "b")
        try suite.flush()
        suite.set(nil, forKey: "a")
        try suite.flush()
        #expect(try directory.storedValues().keys.sorted() == ["b"])
        suite.removeAll()
        try suite.flush()
        #expect(try directory.storedValues().isEmpty)
        #expect(suite.persistentValues().isEmpty)
    }

    @Test func launchArgumentsTakePrecedenceAndAreNeverWritten() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite(arguments: ["-volume", "<integer>9</integer>", "-tags", "(a,b)", "-name", "plain"])
        suite.register(defaults: ["volume": 1, "other": 2])
        #expect(suite.object(forKey: "volume") as? Int == 9)
        suite.set(3, forKey: "volume")
        #expect(suite.object(forKey: "volume") as? Int == 9)
        #expect(suite.object(forKey: "tags") as? [String] == ["a", "b"])
        #expect(suite.object(forKey: "name") as? String == "plain")
        #expect(suite.object(forKey: "other") as? Int == 2)
        try suite.flush()
        let stored = try directory.storedValues()
        #expect(stored["volume"] as? Int == 3)
        #expect(stored["tags"] == nil)
        #expect(stored["name"] == nil)
        #expect(stored["other"] == nil)
        #expect(suite.persistentValues().keys.sorted() == ["volume"])
    }

    @Test func typedKeysReadDefaultsAndStoredValues() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        #expect(Defaults[volume] == 5)
        Defaults[volume] = 7
        try suite.flush()
        #expect(Defaults[Defaults.Key<Int>("volume", default: 5, suite: directory.suite())] == 7)
    }

    @Test func localWritesPostChangesOnlyWhenTheValueChanges() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        let recorder = FileSuiteChangeRecorder(suite)
        suite.set(1, forKey: "a")
        suite.set(1, forKey: "a")
        suite.set(2, forKey: "a")
        suite.removeAll()
        #expect(
            recorder.changes == [
                SuiteChange(keys: ["a"]), SuiteChange(keys: ["a"]), SuiteChange(keys: ["a"]),
            ])
    }

    @Test func nonPropertyListValueIsReportedAndNotStored() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(NSObject(), forKey: "object")
        #expect(suite.object(forKey: "object") == nil)
        #expect(suite.problems.map(\.kind) == [.unsupportedValue])
    }

    @Test func suiteOpenedByFileURL() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let url = directory.url.appendingPathComponent("custom/settings.plist")
        let suite = FileSuite(fileURL: url, arguments: [])
        #expect(suite.name == "settings")
        suite.set("x", forKey: "k")
        try suite.flush()
        #expect(FileManager.default.fileExists(atPath: url.path))
    }

    @Test func locationFollowsFoundation() {
        let directory = URL(fileURLWithPath: "/tmp/config", isDirectory: true)
        #expect(
            FileSuite.fileURL(forName: "com.example.app", in: directory).path == "/tmp/config/com.example.app.plist")
    }

    #if !canImport(Darwin)
    @Test func standardSuiteIsTheFileFoundationUses() throws {
        let standard = try #require(Defaults.standardSuite as? FileSuite)
        #expect(standard === FileSuite.standard)
        #expect(standard.fileURL.lastPathComponent == Defaults.standardSuiteName + ".plist")
        #expect(standard.fileURL.deletingLastPathComponent().path == FileSuite.defaultDirectory.path)
    }

    /// The standard suite keeps its registered defaults to itself: Foundation's
    /// `UserDefaults.standard` is not even created (it would cost every program's start), and a
    /// key read through it still falls back to the key's default.
    @Test func standardSuiteRegistersWithoutFoundationsUserDefaults() {
        let name = "fileSuiteRegistrationTest\(UUID().uuidString.prefix(8))"
        FileSuite.standard.register(defaults: [name: true])
        #expect(FileSuite.standard.object(forKey: name) as? Bool == true)
        #expect(UserDefaults.standard.object(forKey: name) == nil)
        let key = Defaults.Key<Bool>(name, default: true)
        #expect(UserDefaults.standard[key])
    }
    #endif
}
