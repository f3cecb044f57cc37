@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

extension Trust {
    /// Item 5: a file whose text is not valid UTF-8 is damaged: kept as a backup and reported,
    /// never repaired to U+FFFD and then overwritten.
    @Suite struct DamagedTextTests {
        /// A plist whose string is Latin-1 (`é` as the single byte 0xE9), as an editor set to the
        /// wrong encoding writes it.
        static let latin1Plist: Data = {
            var bytes = Array(
                #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>name</key><string>caf"#.utf8)
            bytes.append(0xE9)
            bytes += Array("</string></dict></plist>\n".utf8)
            return Data(bytes)
        }()

        @Test func decoderRefusesInvalidUTF8() throws {
            #expect(throws: PropertyListError.self) { try PropertyList.decode(Self.latin1Plist) }
            // Old-style text and UTF-16 text too.
            #expect(throws: PropertyListError.self) {
                try PropertyList.decode(Data([0x7B, 0x61, 0x3D, 0xFF, 0x3B, 0x7D]))
            }
            #expect(throws: PropertyListError.self) {
                try PropertyList.decode(Data([0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00]))
            }
            // Valid UTF-8 beyond ASCII still reads.
            #expect(try PropertyList.decode(Data("{ a = \"café 🎉\"; }".utf8)) as? [String: String] == ["a": "café 🎉"])
        }

        @Test func suiteKeepsTheOriginalBytesAsABackup() throws {
            let directory = try FileSuiteTemporaryDirectory()
            try Self.latin1Plist.write(to: directory.fileURL())
            let suite = directory.suite()
            let problem = try #require(suite.problems.first)
            #expect(problem.kind == .unreadable)
            let backup = try #require(problem.backupURL)
            #expect(try Data(contentsOf: backup) == Self.latin1Plist)
            #expect(suite.object(forKey: "name") == nil)
            // A write afterwards does not touch the backup.
            suite.set("new", forKey: "other")
            try suite.flush()
            #expect(try Data(contentsOf: backup) == Self.latin1Plist)
        }
    }
}
