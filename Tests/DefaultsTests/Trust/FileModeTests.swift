@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

extension Trust {
    /// Every file the suite creates is the user's alone: the property list (also one written
    /// through a link, or replacing a file others could read) is 0600, the lock file has no
    /// permission for others.
    @Suite struct FileModeTests {
        @Test func createdFilesAreTheUsersAlone() throws {
            let directory = try FileSuiteTemporaryDirectory()
            // A file others could read, written by another program: replaced by one they cannot.
            try PropertyList.encodeXML(["a": 1]).write(to: directory.fileURL())
            try #require(chmod(directory.fileURL().path, 0o644) == 0)
            let suite = directory.suite()
            suite.set(2, forKey: "a")
            try suite.flush()
            #expect(try fileSuitePermissions(of: directory.fileURL().path) == 0o600)
            #expect(try fileSuitePermissions(of: directory.path + "/.test.plist.lock") & 0o077 == 0)
            #expect(try directory.storedValues()["a"] as? Int == 2)
        }

        @Test func fileWrittenThroughALinkIsTheUsersAlone() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let target = directory.url.appendingPathComponent("dotfile.plist")
            try PropertyList.encodeXML(["a": 1]).write(to: target)
            try #require(chmod(target.path, 0o664) == 0)
            try #require(symlink(target.path, directory.fileURL().path) == 0)
            let suite = directory.suite()
            suite.set(2, forKey: "a")
            try suite.flush()
            #expect(try fileSuitePermissions(of: target.path) == 0o600)
            #expect(fileType(at: directory.fileURL().path) == S_IFLNK)
        }
    }
}
