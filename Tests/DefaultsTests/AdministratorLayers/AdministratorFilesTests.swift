@_spi(Testing) import Defaults
import DefaultsFiles
import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Administrator layers: changes and hostile files", .mayBlock)
struct AdministratorFilesTests {
    @Test("A change to a vendor file reaches observers, as a change from another process")
    func vendorChangeIsObserved() async throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["greeting": "hello"], to: sandbox.vendorURL(in: sandbox.first))
        let suite = sandbox.suite()
        let greeting = Defaults.Key<String>("greeting", default: "code", suite: suite)
        let recorder = FileSuiteChangeRecorder(suite)
        try sandbox.write(["greeting": "bonjour"], to: sandbox.vendorURL(in: sandbox.first))
        try await recorder.wait { $0.keys.contains("greeting") && $0.origin == .otherProcess }
        #expect(Defaults[greeting] == "bonjour")
        try FileManager.default.removeItem(at: sandbox.vendorURL(in: sandbox.first))
        try await waitUntil { Defaults[greeting] == "code" }
    }

    @Test("A managed file appearing, changing in place and going away is seen at once")
    func managedChangeIsObserved() async throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.makeManagedDirectory(in: sandbox.second)
        let suite = sandbox.suite()
        suite.set("mine", forKey: "server")
        let recorder = FileSuiteChangeRecorder(suite)
        try sandbox.write(["server": "enforced"], to: sandbox.managedURL(in: sandbox.second))
        try await recorder.wait { $0.keys.contains("server") }
        #expect(suite.object(forKey: "server") as? String == "enforced")
        #expect(suite.isManaged("server"))
        // Rewritten in place, as an editor may.
        let handle = try FileHandle(forWritingTo: sandbox.managedURL(in: sandbox.second))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: PropertyList.encodeXML(["server": "changed"]))
        try handle.close()
        try await waitUntil { suite.object(forKey: "server") as? String == "changed" }
        try FileManager.default.removeItem(at: sandbox.managedURL(in: sandbox.second))
        try await waitUntil { suite.object(forKey: "server") as? String == "mine" }
        #expect(!suite.isManaged("server"))
    }

    /// Puts `make`'s result in the place of the first directory's vendor file, opens a suite,
    /// and checks that the file is ignored with a report naming it, and the second directory's
    /// value is used.
    private func expectIgnored(
        _ reason: String, sourceLocation: SourceLocation = #_sourceLocation, _ make: (URL) throws -> Void
    ) throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["key": "second"], to: sandbox.vendorURL(in: sandbox.second))
        let hostile = sandbox.vendorURL(in: sandbox.first)
        try make(hostile)
        let suite = sandbox.suite()
        #expect(suite.object(forKey: "key") as? String == "second", sourceLocation: sourceLocation)
        let problem = suite.problems.first { $0.fileURL == hostile }
        #expect(problem?.kind == .unreadable, "\(suite.problems)", sourceLocation: sourceLocation)
        #expect(
            problem?.message.contains(reason) == true, "\(String(describing: problem))", sourceLocation: sourceLocation)
        // Reading never changes an administrator's file.
        #expect(
            (try? FileManager.default.attributesOfItem(atPath: hostile.path)) != nil, sourceLocation: sourceLocation)
    }

    @Test("A symbolic link is not followed")
    func symbolicLink() throws {
        try expectIgnored("symbolic link") { url in
            let target = url.deletingLastPathComponent().appendingPathComponent("target.plist")
            try PropertyList.encodeXML(["key": "through the link"]).write(to: target)
            try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
        }
    }

    @Test("A FIFO is refused without blocking")
    func fifo() throws {
        try expectIgnored("not a regular file") { url in
            #expect(mkfifo(url.path, 0o600) == 0)
        }
    }

    @Test("A directory in the file's place is refused")
    func directory() throws {
        try expectIgnored("not a regular file") { url in
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
    }

    @Test("A file over the size limit is refused")
    func tooLarge() throws {
        try expectIgnored("larger than") { url in
            // Sparse: as large as the limit allows, and one byte more.
            try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(BoundedFileRead.sizeLimit + 1))
            try handle.close()
        }
    }

    @Test("Garbage and a wrong top-level value are refused", arguments: ["garbage <<<", "(1, 2)"])
    func notADictionary(text: String) throws {
        try expectIgnored("ignored") { url in
            try Data(text.utf8).write(to: url)
        }
    }

    @Test("An empty file holds no values and is no problem")
    func emptyFile() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["key": "second"], to: sandbox.vendorURL(in: sandbox.second))
        try Data().write(to: sandbox.vendorURL(in: sandbox.first))
        let suite = sandbox.suite()
        #expect(suite.object(forKey: "key") as? String == "second")
        #expect(suite.problems.isEmpty)
    }
}
