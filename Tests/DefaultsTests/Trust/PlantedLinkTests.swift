@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Item 2: links planted where the suite creates files are never followed.
    @Suite struct PlantedLinkTests {
        /// Another user of a shared directory plants a link at the temporary file name a writer
        /// would use (formerly `.<name>.plist.tmp-<pid>`) pointing at a file of the writer's.
        @Test func linkAtTheTemporaryFileNameIsNotWrittenThrough() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let victim = directory.url.appendingPathComponent("victim.txt")
            try Data("precious".utf8).write(to: victim)
            let planted = directory.path + "/.test.plist.tmp-\(getpid())"
            try #require(symlink(victim.path, planted) == 0)

            let suite = directory.suite()
            suite.set(1, forKey: "a")
            try suite.flush()

            #expect(try Data(contentsOf: victim) == Data("precious".utf8))
            #expect(fileType(at: directory.fileURL().path) == S_IFREG)
            #expect(try directory.storedValues()["a"] as? Int == 1)
            // The planted link is someone else's: left as it is.
            #expect(fileType(at: planted) == S_IFLNK)
        }

        /// The lock file is created with O_NOFOLLOW: a link in its place is refused, nothing is
        /// created through it, and the value stays in memory.
        @Test func linkAtTheLockFileNameIsRefused() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let target = directory.url.appendingPathComponent("created-through-the-link")
            try #require(symlink(target.path, directory.path + "/.test.plist.lock") == 0)

            let suite = directory.suite()
            suite.set(1, forKey: "a")
            #expect(throws: DefaultsError.self) { try suite.flush() }

            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(suite.object(forKey: "a") as? Int == 1)
            #expect(suite.problems.last?.kind == .lockFailed)
        }

        /// A FIFO in the lock file's place is neither waited on nor used as a lock.
        @Test func fifoAtTheLockFileNameIsRefused() throws {
            let directory = try FileSuiteTemporaryDirectory()
            try #require(mkfifo(directory.path + "/.test.plist.lock", 0o600) == 0)
            let suite = directory.suite()
            suite.set(1, forKey: "a")
            #expect(throws: DefaultsError.self) { try suite.flush() }
            #expect(suite.problems.last?.kind == .lockFailed)
            #expect(fileType(at: directory.fileURL().path) == nil)
            #expect(suite.object(forKey: "a") as? Int == 1)
        }

        /// In a shared directory (sticky, writable by all), another user plants a link at the
        /// suite file's name pointing at a file of the writer's (their shell profile): the file is
        /// neither overwritten nor moved aside as damaged, and the link stays.
        @Test(.enabled(if: geteuid() == 0, "only root can give a link to another user"))
        func linkPlantedByAnotherUserAtTheSuiteFileIsNotFollowed() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let shared = directory.url.appendingPathComponent("shared", isDirectory: true)
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
            try #require(chmod(shared.path, 0o1777) == 0)
            let victim = directory.url.appendingPathComponent("profile")
            try Data("export PATH=/usr/bin\n".utf8).write(to: victim)
            let planted = shared.appendingPathComponent("test.plist").path
            try #require(symlink(victim.path, planted) == 0)
            try #require(lchown(planted, 65534, 65534) == 0)

            let suite = FileSuite(name: "test", directory: shared, arguments: [])
            suite.set(1, forKey: "a")
            #expect(throws: DefaultsError.self) { try suite.flush() }

            #expect(try Data(contentsOf: victim) == Data("export PATH=/usr/bin\n".utf8))
            #expect(fileType(at: planted) == S_IFLNK)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["profile", "shared"])
            #expect(suite.object(forKey: "a") as? Int == 1)
        }

        /// A link planted by another user at the suite file's name, to a property list of theirs,
        /// is not read either: its values never become the user's settings.
        @Test(.enabled(if: geteuid() == 0, "only root can give a link to another user"))
        func linkPlantedByAnotherUserIsNotRead() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let shared = directory.url.appendingPathComponent("shared", isDirectory: true)
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
            try #require(chmod(shared.path, 0o1777) == 0)
            let theirs = shared.appendingPathComponent("theirs.plist")
            try PropertyList.encodeXML(["server": "https://attacker.example"]).write(to: theirs)
            try #require(chown(theirs.path, 65534, 65534) == 0)
            let planted = shared.appendingPathComponent("test.plist").path
            try #require(symlink(theirs.path, planted) == 0)
            try #require(lchown(planted, 65534, 65534) == 0)

            let suite = FileSuite(name: "test", directory: shared, arguments: [])
            #expect(suite.object(forKey: "server") == nil)
            #expect(suite.problems.first?.message.contains("a link made by another user") == true, "\(suite.problems)")
            #expect(fileType(at: planted) == S_IFLNK)
        }

        /// A link to a file not created yet is followed only into a directory the user owns: a
        /// link into another user's directory does not create a file there.
        @Test(.enabled(if: geteuid() == 0, "only root can give a directory to another user"))
        func danglingLinkIntoAnotherUsersDirectoryCreatesNothing() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let config = directory.url.appendingPathComponent("config", isDirectory: true)
            let others = directory.url.appendingPathComponent("others", isDirectory: true)
            for folder in [config, others] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            try #require(chown(others.path, 65534, 65534) == 0)
            try #require(chmod(others.path, 0o777) == 0)
            try #require(symlink(others.path + "/authorized", config.path + "/test.plist") == 0)

            let suite = FileSuite(name: "test", directory: config, arguments: [])
            suite.set(1, forKey: "a")
            #expect(throws: DefaultsError.self) { try suite.flush() }

            #expect(try FileManager.default.contentsOfDirectory(atPath: others.path).isEmpty)
            #expect(fileType(at: config.path + "/test.plist") == S_IFLNK)
        }
    }
}
