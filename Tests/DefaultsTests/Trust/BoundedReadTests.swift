@_spi(Testing) import Defaults
import DefaultsFiles
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Item 3, at the edges of the size limit: a file exactly at the limit is read whole, one byte
    /// more is refused, and a huge sparse file is refused without being read.
    @Suite struct BoundedReadTests {
        func file(_ directory: FileSuiteTemporaryDirectory, size: Int) throws -> String {
            let path = directory.path + "/input-\(size)"
            try Data(repeating: UInt8(ascii: "x"), count: size).write(to: URL(fileURLWithPath: path))
            return path
        }

        @Test func fileExactlyAtTheLimitIsReadWhole() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let data = try BoundedFileRead.readInput(try file(directory, size: 10_000), limit: 10_000)
            #expect(data == Data(repeating: UInt8(ascii: "x"), count: 10_000))
        }

        @Test func oneByteOverTheLimitIsRefused() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let path = try file(directory, size: 10_001)
            let error = #expect(throws: (any Error).self) { try BoundedFileRead.readInput(path, limit: 10_000) }
            #expect("\(error.map { "\($0)" } ?? "")" == "it is larger than 10000 bytes")
        }

        @Test func emptyFileAndLinkToAFileAreRead() throws {
            let directory = try FileSuiteTemporaryDirectory()
            #expect(try BoundedFileRead.readInput(try file(directory, size: 0), limit: 10).isEmpty)
            let link = directory.path + "/link"
            try #require(symlink(try file(directory, size: 3), link) == 0)
            #expect(try BoundedFileRead.readInput(link, limit: 10) == Data("xxx".utf8))
        }

        /// A sparse suite file of a terabyte: reported, never read nor replaced; the suite goes
        /// on in memory.
        @Test func hugeSparseSuiteFileIsReportedAndLeftInPlace() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let path = directory.fileURL().path
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            try #require(fd >= 0)
            let isTruncated = ftruncate(fd, 1 << 40) == 0
            close(fd)
            try #require(isTruncated, "the file system cannot hold a sparse file of 1 TB")

            let suite = directory.suite()
            #expect(suite.problems.first?.message.contains("larger than 64 MB") == true, "\(suite.problems)")
            suite.set(1, forKey: "a")
            #expect(throws: DefaultsError.self) { try suite.flush() }
            #expect(suite.object(forKey: "a") as? Int == 1)
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_size == 1 << 40)
        }
    }
}
