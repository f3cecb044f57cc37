@_spi(Testing) import Defaults
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
            #expect(throws: SuiteError.self) { try suite.flush() }

            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(suite.object(forKey: "a") as? Int == 1)
            #expect(suite.problems.last?.kind == .lockFailed)
        }
    }
}
