@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Item 4: a suite file that is a link (a dotfile kept in a repository) keeps working.
    @Suite struct LinkedSuiteFileTests {
        /// `dotfiles/test.plist` holds the data; `config/test.plist` links to it.
        func linkedSetup(_ directory: FileSuiteTemporaryDirectory) throws -> (target: URL, link: URL, config: URL) {
            let dotfiles = directory.url.appendingPathComponent("dotfiles", isDirectory: true)
            let config = directory.url.appendingPathComponent("config", isDirectory: true)
            try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            let target = dotfiles.appendingPathComponent("test.plist")
            try PropertyList.encodeXML(["kept": "yes"]).write(to: target)
            let link = config.appendingPathComponent("test.plist")
            try #require(symlink(target.path, link.path) == 0)
            return (target, link, config)
        }

        @Test func writeGoesThroughTheLinkToItsTarget() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let (target, link, config) = try linkedSetup(directory)
            let suite = FileSuite(name: "test", directory: config, arguments: [])
            #expect(suite.object(forKey: "kept") as? String == "yes")
            suite.set(2, forKey: "new")
            try suite.flush()

            #expect(fileType(at: link.path) == S_IFLNK)
            let stored = try #require(try PropertyList.decode(Data(contentsOf: target)) as? [String: Any])
            #expect(stored["kept"] as? String == "yes")
            #expect(stored["new"] as? Int == 2)
            #expect(suite.problems.isEmpty)
            // No temporary file is left beside the target or the link.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path)
            #expect(leftovers == ["test.plist"])
        }

        /// Another writer of the target (here a suite opened on it directly) is seen through the link.
        @Test func writesToTheTargetAreSeen() async throws {
            let directory = try FileSuiteTemporaryDirectory()
            let (target, _, config) = try linkedSetup(directory)
            let linked = FileSuite(name: "test", directory: config, arguments: [])
            let recorder = FileSuiteChangeRecorder(linked)
            let direct = FileSuite(fileURL: target, arguments: [])
            direct.set("from the target", forKey: "other")
            try direct.flush()
            try await recorder.wait { $0.keys.contains("other") }
            #expect(linked.object(forKey: "other") as? String == "from the target")
        }

        @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
        func linkToAnotherUsersFileIsNotWritten() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let (target, link, config) = try linkedSetup(directory)
            try #require(chown(target.path, 65534, 65534) == 0)
            let before = try Data(contentsOf: target)
            let suite = FileSuite(name: "test", directory: config, arguments: [])
            suite.set(2, forKey: "new")
            #expect(throws: DefaultsError.self) { try suite.flush() }
            #expect(try Data(contentsOf: target) == before)
            #expect(fileType(at: link.path) == S_IFLNK)
            #expect(suite.problems.last?.message.contains("belongs to another user") == true)
            #expect(suite.object(forKey: "new") as? Int == 2)
        }

        /// A chain of links to a file not created yet (`config/test.plist` → `dotfiles/current.plist`
        /// → `dotfiles/real.plist`): the file is created at the end of the chain, and both links stay.
        @Test func danglingChainOfLinksIsCreatedAtItsEnd() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let config = directory.url.appendingPathComponent("config", isDirectory: true)
            let dotfiles = directory.url.appendingPathComponent("dotfiles", isDirectory: true)
            for folder in [config, dotfiles] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            try #require(symlink("real.plist", dotfiles.path + "/current.plist") == 0)
            try #require(symlink(dotfiles.path + "/current.plist", config.path + "/test.plist") == 0)

            let suite = FileSuite(name: "test", directory: config, arguments: [])
            suite.set(1, forKey: "a")
            try suite.flush()

            #expect(fileType(at: config.path + "/test.plist") == S_IFLNK)
            #expect(fileType(at: dotfiles.path + "/current.plist") == S_IFLNK)
            #expect(fileType(at: dotfiles.path + "/real.plist") == S_IFREG)
            let stored = try PropertyList.decode(Data(contentsOf: dotfiles.appendingPathComponent("real.plist")))
            #expect((stored as? [String: Any])?["a"] as? Int == 1)
        }
    }
}
