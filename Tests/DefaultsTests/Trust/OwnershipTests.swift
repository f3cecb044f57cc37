@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Files and directories of other users: whoever owns a file, or a directory above it, can
    /// change what it says. The user's files must be the user's or root's; an administrator's
    /// must be root's (or their directory owner's) and writable by no one else.
    /// Giving a file to another user takes root, so these run as root only.
    @Suite(.enabled(if: geteuid() == 0, "giving a file to another user takes root"))
    struct OwnershipTests {
        /// `nobody`: a user that is neither root nor the one running the tests.
        let otherUser: uid_t = 65534

        func giveAway(_ path: String) throws {
            try #require(chown(path, otherUser, otherUser) == 0, "chown \(path): \(errno)")
        }

        @Test func aSuiteFileOfAnotherUserIsNeitherReadNorReplaced() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let path = directory.fileURL().path
            let planted = try PropertyList.encodeXML(["token": "planted"])
            try planted.write(to: directory.fileURL())
            try giveAway(path)

            let suite = directory.suite()
            #expect(suite.object(forKey: "token") == nil, "another user's values are not taken")
            let problem = try #require(suite.problems.first)
            #expect(problem.kind == .unreadable && problem.message.contains("another user"), "\(problem.message)")
            suite.set("mine", forKey: "token")
            #expect(throws: DefaultsError.self) { try suite.flush() }
            #expect(suite.object(forKey: "token") as? String == "mine", "the suite goes on in memory")
            #expect(try Data(contentsOf: directory.fileURL()) == planted)
        }

        @Test func aSuiteInADirectoryOfAnotherUserIsNeitherReadNorWritten() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let shared = directory.url.appendingPathComponent("shared", isDirectory: true)
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
            try PropertyList.encodeXML(["token": "planted"]).write(to: shared.appendingPathComponent("test.plist"))
            try giveAway(shared.path)

            let suite = FileSuite(name: "test", directory: shared)
            #expect(suite.object(forKey: "token") == nil)
            #expect(
                suite.problems.first?.message.contains("\(shared.path) cannot be trusted") == true,
                "\(suite.problems.map(\.message))")
            suite.set("mine", forKey: "token")
            #expect(throws: DefaultsError.self) { try suite.flush() }
            let names = try FileManager.default.contentsOfDirectory(atPath: shared.path)
            #expect(names == ["test.plist"], "nothing written there: \(names)")
        }

        /// Above the user's home directory the directories are the system's, and not judged (as
        /// OpenSSH judges `~/.ssh`): in a user namespace, `/` may show as owned by `nobody`.
        @Test func directoriesAboveTheHomeDirectoryAreNotJudged() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let system = directory.url.appendingPathComponent("system", isDirectory: true)
            let home = system.appendingPathComponent("home", isDirectory: true)
            let config = home.appendingPathComponent(".config", isDirectory: true)
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try giveAway(system.path)

            let inHome = try TestHelper.run(
                ["filesuite-set", config.path, "test", "k", "v"], environment: ["HOME": home.path])
            #expect(inHome.status == 0, "\(inHome)")
            #expect(FileManager.default.fileExists(atPath: config.appendingPathComponent("test.plist").path))
            // The same directory, not in the home directory: the other user's directory above it counts.
            let elsewhere = try TestHelper.run(
                ["filesuite-set", config.path, "other", "k", "v"], environment: ["HOME": directory.path])
            #expect(elsewhere.status != 0, "\(elsewhere)")
            #expect(elsewhere.error.contains("\(system.path) cannot be trusted"), "\(elsewhere.error)")
        }

        @Test func administratorFilesOthersOwnOrMayWriteAreIgnoredAndReported() throws {
            let sandbox = try AdministratorSandbox()
            // The first directory: a vendor file of another user's, and a managed file others may write.
            try sandbox.write(["theme": "planted"], to: sandbox.vendorURL(in: sandbox.first))
            try giveAway(sandbox.vendorURL(in: sandbox.first).path)
            try sandbox.write(["limit": 1], to: sandbox.managedURL(in: sandbox.first))
            try #require(chmod(sandbox.managedURL(in: sandbox.first).path, 0o666) == 0)
            // The second: files as an administrator leaves them, which count.
            try sandbox.write(["theme": "vendor"], to: sandbox.vendorURL(in: sandbox.second))
            try sandbox.write(["limit": 2], to: sandbox.managedURL(in: sandbox.second))

            let suite = sandbox.suite()
            #expect(suite.object(forKey: "theme") as? String == "vendor")
            #expect(suite.object(forKey: "limit") as? Int == 2)
            let messages = suite.problems.map(\.message)
            #expect(messages.contains { $0.contains("neither root nor the owner of its directory") }, "\(messages)")
            #expect(messages.contains { $0.contains("writable by users other than its owner") }, "\(messages)")
        }

        @Test func aManagedDirectoryThatIsALinkIsNotFollowed() throws {
            let sandbox = try AdministratorSandbox()
            let elsewhere = try FileSuiteTemporaryDirectory()
            try sandbox.write(["limit": 1], to: elsewhere.url.appendingPathComponent(sandbox.name + ".plist"))
            try #require(
                symlink(elsewhere.path, sandbox.first.url.appendingPathComponent("managed").path) == 0)

            let suite = sandbox.suite()
            #expect(suite.object(forKey: "limit") == nil)
            #expect(!suite.isManaged("limit"))
            #expect(
                suite.problems.contains { $0.message.contains("is a symbolic link") },
                "\(suite.problems.map(\.message))")
        }
    }
}
