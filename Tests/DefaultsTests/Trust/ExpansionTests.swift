@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

extension Trust {
    /// Item 6: a small binary plist whose objects reference one string many times is refused,
    /// instead of expanding to far more memory (and a far larger XML file) than its size.
    @Suite struct ExpansionTests {
        /// `{ k = (s, s, s, …) }`: `count` one-byte references to one string of `length` bytes.
        static func sharedStringPlist(count: Int, length: Int) -> Data {
            let string = [0x5F, 0x11, UInt8(length >> 8), UInt8(length & 0xFF)] + [UInt8](repeating: 65, count: length)
            return sharedReferencePlist(count: count, sharedObject: string)
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
