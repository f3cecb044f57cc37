@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// R3/R4/R5: damaged files and failing writes never crash, are reported, keep the original, and
/// leave the suite serving defaults and in-memory values.
@Suite("FileSuite bad files", .mayBlock)
struct FileSuiteRecoveryTests {
    struct DamagedFile: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var testDescription: String { name }
    }

    static let validFile: [UInt8] = {
        let data = (try? PropertyList.encodeXML(["volume": 3, "name": "kept", "list": [1, 2, 3]])) ?? Data()
        return Array(data)
    }()

    static let damagedFiles: [DamagedFile] = [
        DamagedFile(
            name: "corrupt XML",
            bytes: Array("<?xml version=\"1.0\"?><plist><dict><key>volume</key><integr>3</dict></plist>".utf8)),
        DamagedFile(name: "truncated", bytes: Array(validFile.prefix(validFile.count / 2))),
        // An empty file is an empty suite, not a damaged one (Trust.EmptyFileTests).
        DamagedFile(
            name: "invalid UTF-8",
            bytes: Array("<plist><dict><key>name</key><string>".utf8) + [0xC3, 0x28]
                + Array("</string></dict></plist>".utf8)),
        DamagedFile(
            name: "binary garbage", bytes: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }),
        DamagedFile(
            name: "damaged binary plist", bytes: Array("bplist00".utf8) + [0xD1, 0x01, 0x02, 0xFF, 0xFF, 0x00, 0x13]),
        DamagedFile(name: "array at the top level", bytes: Array((try? PropertyList.encodeXML([1, 2, 3])) ?? Data())),
        DamagedFile(name: "string at the top level", bytes: Array("<plist><string>volume</string></plist>".utf8)),
    ]

    @Test(arguments: damagedFiles)
    func damagedFileIsMovedAsideAndDefaultsAreServed(file: DamagedFile) throws {
        let directory = try FileSuiteTemporaryDirectory()
        try Data(file.bytes).write(to: directory.fileURL())
        let suite = directory.suite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)

        #expect(Defaults[volume] == 5)
        let problem = try #require(suite.problems.first)
        #expect(suite.problems.count == 1)
        #expect(problem.kind == .unreadable)
        let backup = try #require(problem.backupURL)
        #expect(backup.lastPathComponent.hasPrefix("test.plist.corrupt-"))
        #expect(try Data(contentsOf: backup) == Data(file.bytes))
        #expect(problem.message.contains(backup.path))

        // The suite goes on: values are stored in a new file, and the backup stays.
        Defaults[volume] = 8
        try suite.flush()
        #expect(try directory.storedValues()["volume"] as? Int == 8)
        #expect(try Data(contentsOf: backup) == Data(file.bytes))
    }

    @Test func backupsDoNotOverwriteEachOther() throws {
        let directory = try FileSuiteTemporaryDirectory()
        for content in ["garbage one", "garbage two"] {
            try Data(content.utf8).write(to: directory.fileURL())
            _ = directory.suite()
        }
        let backups = try directory.files(startingWith: "test.plist.corrupt-")
        #expect(backups.count == 2)
        let contents = try backups.map { try String(contentsOfFile: directory.path + "/" + $0, encoding: .utf8) }
        #expect(Set(contents) == ["garbage one", "garbage two"])
    }

    @Test func fileDamagedWhileOpenIsMovedAsideAndReported() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(1, forKey: "a")
        try suite.flush()
        let reported = Mutex<[DefaultsError]>([])
        suite.onProblem = { problem in reported.withLock { $0.append(problem) } }
        let recorder = FileSuiteChangeRecorder(suite)
        // Another program writes garbage in place.
        try Data("not a plist".utf8).write(to: directory.fileURL())
        try await waitUntil("a reported problem") { !reported.withLock { $0.isEmpty } }
        #expect(reported.withLock { $0.first?.kind } == .unreadable)
        try await recorder.wait { $0.origin == .otherProcess && $0.keys.contains("a") }
        #expect(suite.object(forKey: "a") == nil)
        #expect(try directory.files(startingWith: "test.plist.corrupt-").count == 1)
    }

    /// R4: a value of the wrong type, stored by another program, reads as the default and is kept.
    @Test func valueOfTheWrongTypeReadsAsTheDefaultAndIsKept() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try PropertyList.encodeXML(["count": "not a number"]).write(to: directory.fileURL())
        let suite = directory.suite()
        let count = Defaults.Key<Int>("count", default: 3, suite: suite)
        #expect(Defaults[count] == 3)
        suite.set(true, forKey: "other")
        try suite.flush()
        #expect(try directory.storedValues()["count"] as? String == "not a number")
        #expect(suite.problems.isEmpty)
    }

    @Test func directoryInPlaceOfTheFile() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.fileURL(), withIntermediateDirectories: false)
        let suite = directory.suite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        #expect(Defaults[volume] == 5)
        #expect(suite.problems.map(\.kind) == [.unreadable])

        Defaults[volume] = 6
        #expect(Defaults[volume] == 6)
        #expect(throws: DefaultsError.self) { try suite.flush() }
        #expect(suite.problems.last?.kind == .writeFailed)
        #expect(Defaults[volume] == 6)
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: directory.fileURL().path, isDirectory: &isDirectory)
                && isDirectory.boolValue)

        // Once the directory is gone, the next flush stores what was kept in memory.
        try FileManager.default.removeItem(at: directory.fileURL())
        try suite.flush()
        #expect(try directory.storedValues()["volume"] as? Int == 6)
    }

    @Test func fileReplacedByADirectoryWhileOpen() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(1, forKey: "a")
        try suite.flush()
        try FileManager.default.removeItem(at: directory.fileURL())
        try FileManager.default.createDirectory(at: directory.fileURL(), withIntermediateDirectories: false)
        suite.set(2, forKey: "b")
        #expect(throws: DefaultsError.self) { try suite.flush() }
        #expect(suite.object(forKey: "b") as? Int == 2)
        #expect(suite.problems.contains { $0.kind == .writeFailed })
        try FileManager.default.removeItem(at: directory.fileURL())
        try suite.flush()
        #expect(try directory.storedValues()["b"] as? Int == 2)
    }

    /// Whether a directory can be made unwritable here: by permissions (not root), a read-only
    /// mount or the immutable flag.
    static let canMakeUnwritable: Bool = {
        guard let directory = try? FileSuiteTemporaryDirectory(), let unlock = makeUnwritable(directory.path) else {
            return false
        }
        unlock()
        return true
    }()

    /// Whether a small tmpfs can be mounted here (root, with mounts allowed), to fill a disk.
    static let canMountTmpfs: Bool = {
        guard let directory = try? FileSuiteTemporaryDirectory(),
            fileSuiteShell("mount -t tmpfs -o size=64k,mode=0700 tmpfs '\(directory.path)'") == 0
        else { return false }
        fileSuiteShell("umount '\(directory.path)'")
        return true
    }()

    @Test(.enabled(if: canMakeUnwritable, "no way to make a directory unwritable here"))
    func unwritableDirectory() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let target = directory.url.appendingPathComponent("locked", isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        let unlock = try #require(Self.makeUnwritable(target.path))
        var isUnlocked = false
        defer { if !isUnlocked { unlock() } }
        let suite = FileSuite(name: "test", directory: target, arguments: [])
        suite.set("kept", forKey: "value")
        #expect(throws: DefaultsError.self) { try suite.flush() }
        #expect(suite.problems.last?.kind == .writeFailed)
        #expect(suite.object(forKey: "value") as? String == "kept")

        unlock()
        isUnlocked = true
        try suite.flush()
        #expect(suite.object(forKey: "value") as? String == "kept")
        let data = try Data(contentsOf: target.appendingPathComponent("test.plist"))
        #expect((try PropertyList.decode(data) as? [String: Any])?["value"] as? String == "kept")
    }

    // A 64 KiB tmpfs needs root; `fileSizeLimit` covers failing writes everywhere.
    @Test(.enabled(if: canMountTmpfs, "mounting a tmpfs needs root"))
    func fullDisk() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let mountPoint = directory.url.appendingPathComponent("tiny", isDirectory: true)
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: false)
        try #require(fileSuiteShell("mount -t tmpfs -o size=64k,mode=0700 tmpfs '\(mountPoint.path)'") == 0)
        defer { fileSuiteShell("umount '\(mountPoint.path)'") }
        let suite = FileSuite(name: "test", directory: mountPoint, arguments: [])
        suite.set("small", forKey: "small")
        try suite.flush()
        suite.set(Data(repeating: 7, count: 200_000), forKey: "big")
        #expect(throws: DefaultsError.self) { try suite.flush() }
        #expect(suite.problems.last?.kind == .writeFailed)
        #expect(suite.problems.last?.message.contains("No space left on device") == true)
        #expect((suite.object(forKey: "big") as? Data)?.count == 200_000)
        // The previous file is intact, and no temporary file is left behind.
        #expect(
            (try PropertyList.decode(Data(contentsOf: mountPoint.appendingPathComponent("test.plist")))
                as? [String: Any])?.count == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: mountPoint.path).filter { $0.contains(".tmp-") }.isEmpty
        )

        suite.set(nil, forKey: "big")
        suite.set("after", forKey: "small")
        try suite.flush()
        let stored =
            try PropertyList.decode(Data(contentsOf: mountPoint.appendingPathComponent("test.plist"))) as? [String: Any]
        #expect(stored?["small"] as? String == "after")
    }

    /// A write beyond the process's file size limit fails as on a full disk (EFBIG), in a real
    /// process; the value stays in memory and is stored once the limit is lifted.
    @Test func fileSizeLimit() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let result = try TestHelper.run(["filesuite-file-size-limit", directory.path, "limited"])
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5, "\(result.output)")
        #expect(lines.first == "flush failed: writeFailed")
        #expect(lines.dropFirst().first == "in memory: 10000")
        // Each failed attempt is a problem: on a busy machine the suite's own scheduled write may
        // have failed before the flush did.
        let problems = lines.dropFirst(2).first?.split(separator: " ").last?.split(separator: ",") ?? []
        #expect(lines.dropFirst(2).first?.hasPrefix("problems: ") == true)
        #expect(!problems.isEmpty && problems.allSatisfy { $0 == "writeFailed" }, "\(result.output)")
        #expect(lines.dropFirst(3).first == "retry succeeded")
        #expect((try directory.storedValues("limited")["big"] as? String)?.count == 10_000)
    }

    /// Makes `path` unwritable even for root; returns what undoes it, or `nil` if nothing works here.
    static func makeUnwritable(_ path: String) -> (() -> Void)? {
        if getuid() != 0 {
            chmod(path, 0o500)
            return { chmod(path, 0o700) }
        }
        if fileSuiteShell("mount -t tmpfs -o ro,size=64k tmpfs '\(path)'") == 0 {
            return { fileSuiteShell("umount '\(path)'") }
        }
        if fileSuiteShell("chattr +i '\(path)'") == 0 {
            return { fileSuiteShell("chattr -i '\(path)'") }
        }
        return nil
    }
}
