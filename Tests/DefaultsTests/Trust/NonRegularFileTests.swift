import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Item 3: what is not a regular file is never read (nor waited on): it is reported, and the
    /// suite goes on in memory. Run in a child process, which is killed if it hangs.
    @Suite struct NonRegularFileTests {
        /// What the helper printed. A hang is what these tests look for: the run's deadline kills
        /// the helper and fails the test.
        func open(_ directory: FileSuiteTemporaryDirectory) throws -> String {
            try TestHelper.run(
                ["trust-open", directory.path, "test"], environment: ["XDG_CONFIG_HOME": directory.path]
            )
            .output
        }

        @Test func fifoAtTheSuitePathDoesNotBlock() throws {
            let directory = try FileSuiteTemporaryDirectory()
            try #require(mkfifo(directory.fileURL().path, 0o600) == 0)
            let output = try open(directory)
            #expect(output.contains("problem unreadable: \(directory.fileURL().path) is a FIFO"), "\(output)")
            #expect(output.hasSuffix("value: in memory\n"), "\(output)")
            #expect(fileType(at: directory.fileURL().path) == S_IFIFO)
        }

        @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/zero")))
        func linkToADeviceIsNotRead() throws {
            let directory = try FileSuiteTemporaryDirectory()
            try #require(symlink("/dev/zero", directory.fileURL().path) == 0)
            let output = try open(directory)
            #expect(output.contains("problem unreadable: \(directory.fileURL().path) is a device"), "\(output)")
            #expect(output.hasSuffix("value: in memory\n"), "\(output)")
            #expect(fileType(at: directory.fileURL().path) == S_IFLNK)
        }
    }
}
