@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

extension Trust {
    /// Item 6: a small binary plist whose objects reference one string many times is refused,
    /// instead of expanding to far more memory (and a far larger XML file) than its size.
    @Suite struct ExpansionTests {
        /// `{ k = (s, s, s, …) }`: `count` one-byte references to one string of `length` bytes.
        static func sharedStringPlist(count: Int, length: Int) -> Data {
            var bytes = Array("bplist00".utf8)
            var offsets: [Int] = []
            // 0: the string.
            offsets.append(bytes.count)
            bytes += [0x5F, 0x11, UInt8(length >> 8), UInt8(length & 0xFF)]
            bytes += Array(repeating: UInt8(ascii: "A"), count: length)
            // 1: the array of references to it.
            offsets.append(bytes.count)
            bytes += [0xAF, 0x12] + withUnsafeBytes(of: UInt32(count).bigEndian, Array.init)
            bytes += Array(repeating: 0, count: count)
            // 2: the key; 3: the top dictionary.
            offsets.append(bytes.count)
            bytes += [0x51, UInt8(ascii: "k")]
            offsets.append(bytes.count)
            bytes += [0xD1, 0x02, 0x01]
            let tableStart = bytes.count
            for offset in offsets {
                bytes += withUnsafeBytes(of: UInt32(offset).bigEndian, Array.init)
            }
            bytes += [0, 0, 0, 0, 0, 0, 4, 1]
            bytes += withUnsafeBytes(of: UInt64(offsets.count).bigEndian, Array.init)
            bytes += withUnsafeBytes(of: UInt64(3).bigEndian, Array.init)
            bytes += withUnsafeBytes(of: UInt64(tableStart).bigEndian, Array.init)
            return Data(bytes)
        }

        @Test func sharedReferencesBeyondTheBudgetAreRefused() {
            // 200 KB that would decode to 200,000 copies of a 1,000-byte string (200 MB as XML).
            let bomb = Self.sharedStringPlist(count: 200_000, length: 1_000)
            #expect(bomb.count < 300_000)
            #expect(throws: PropertyListError.self) { try PropertyList.decode(bomb) }
        }

        @Test func modestSharingStillDecodes() throws {
            let shared = Self.sharedStringPlist(count: 1_000, length: 100)
            let decoded = try #require(try PropertyList.decode(shared) as? [String: Any])
            #expect((decoded["k"] as? [String])?.count == 1_000)
        }

        @Test func suiteMovesTheBombAside() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let bomb = Self.sharedStringPlist(count: 200_000, length: 1_000)
            try bomb.write(to: directory.fileURL())
            let suite = directory.suite()
            let backup = try #require(suite.problems.first?.backupURL)
            #expect(try Data(contentsOf: backup) == bomb)
            #expect(suite.persistentValues().isEmpty)
        }
    }
}
