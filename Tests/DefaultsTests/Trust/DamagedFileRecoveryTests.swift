@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Trust {
    /// Damaged files where they cannot be moved aside: nothing is lost, the original is never
    /// overwritten, and once the directory is writable again the original is kept in a backup.
    @Suite struct DamagedFileRecoveryTests {
        /// Whether a directory can be made unwritable here even for root: the immutable flag.
        static let canMakeDirectoriesImmutable: Bool = {
            let probe = FileManager.default.temporaryDirectory.appendingPathComponent("immutable-\(UUID().uuidString)")
            guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: false)) != nil
            else { return false }
            defer { try? FileManager.default.removeItem(at: probe) }
            guard fileSuiteShell("chattr +i '\(probe.path)'") == 0 else { return false }
            fileSuiteShell("chattr -i '\(probe.path)'")
            return true
        }()

        @Test(.enabled(if: canMakeDirectoriesImmutable, "needs chattr +i (root on a file system with the flag)"))
        func damagedFileInAnUnwritableDirectoryIsNeverOverwritten() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let locked = directory.url.appendingPathComponent("locked", isDirectory: true)
            try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
            let file = locked.appendingPathComponent("test.plist")
            let damaged = Data("<plist><dict><key>precious</key><string>half".utf8)
            try damaged.write(to: file)
            // The lock file exists: only the directory's entries are frozen.
            try Data().write(to: locked.appendingPathComponent(".test.plist.lock"))
            try #require(fileSuiteShell("chattr +i '\(locked.path)'") == 0)
            var isUnlocked = false
            defer { if !isUnlocked { fileSuiteShell("chattr -i '\(locked.path)'") } }

            let suite = FileSuite(name: "test", directory: locked, arguments: [])
            #expect(suite.problems.first?.message.contains("could not be moved aside") == true, "\(suite.problems)")
            suite.set(1, forKey: "a")
            #expect(throws: DefaultsError.self) { try suite.flush() }
            suite.reload()
            #expect(try Data(contentsOf: file) == damaged)
            #expect(suite.object(forKey: "a") as? Int == 1)

            fileSuiteShell("chattr -i '\(locked.path)'")
            isUnlocked = true
            try suite.flush()
            let backups = try FileManager.default.contentsOfDirectory(atPath: locked.path)
                .filter { $0.hasPrefix("test.plist.corrupt-") }
            #expect(backups.count == 1)
            #expect(try backups.first.map { try Data(contentsOf: locked.appendingPathComponent($0)) } == damaged)
            let stored = try PropertyList.decode(Data(contentsOf: file)) as? [String: Any]
            #expect(stored?["a"] as? Int == 1)
        }
    }
}
