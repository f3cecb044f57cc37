import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every problem the library reports is one `DefaultsError`: its kind, where it happened and a
/// message that names the cause.
@Suite(.mayBlock) struct DefaultsErrorTests {
    @Test func unreadableFileNamesTheFileAndTheBackup() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try Data("not a plist".utf8).write(to: directory.fileURL())
        let suite = directory.suite()
        let problem = try #require(suite.problems.first)
        #expect(problem.kind == .unreadable)
        #expect(problem.suite == "test")
        #expect(problem.fileURL == directory.fileURL())
        let backup = try #require(problem.backupURL)
        #expect(backup.lastPathComponent.hasPrefix("test.plist.corrupt-"))
        #expect(try Data(contentsOf: backup) == Data("not a plist".utf8))
        #expect(problem.causes.isEmpty)
        #expect(problem.description.hasPrefix("Suite \"test\": "))
        #expect(problem.description.contains(backup.lastPathComponent))
    }

    @Test func failedLockKeepsTheCauseAndTheValues() throws {
        let directory = try FileSuiteTemporaryDirectory()
        // A link planted in the lock file's place is refused, so the write cannot happen.
        let target = directory.url.appendingPathComponent("elsewhere")
        try #require(symlink(target.path, directory.path + "/.test.plist.lock") == 0)
        let suite = directory.suite()
        suite.set(6, forKey: "volume")
        do {
            try suite.flush()
            Issue.record("a flush without its lock succeeded")
        } catch let error as DefaultsError {
            #expect(error.kind == .lockFailed)
            #expect(error.suite == "test")
            #expect(error.fileURL == directory.fileURL())
            #expect(error.underlyingError != nil)
            #expect(error.message.hasPrefix("could not write \(directory.fileURL().path): could not lock"))
            #expect(error.message.hasSuffix("the values stay in memory and are written at the next flush"))
            #expect(error.description == "Suite \"test\": \(error.message)")
        }
        #expect(suite.object(forKey: "volume") as? Int == 6)
        #expect(suite.problems.last?.kind == .lockFailed)
    }

    @Test func directoryInTheFilesPlaceFailsTheWrite() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.fileURL(), withIntermediateDirectories: false)
        let suite = directory.suite()
        suite.set(6, forKey: "volume")
        do {
            try suite.flush()
            Issue.record("a flush over a directory succeeded")
        } catch let error as DefaultsError {
            #expect(error.kind == .writeFailed)
            #expect(error.suite == "test")
            #expect(error.fileURL?.path == directory.fileURL().path)
            #expect(error.message.contains("is a directory"))
        }
        #expect(suite.object(forKey: "volume") as? Int == 6)
    }

    @Test func objectThatIsNotAPropertyListNamesTheKey() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        let reported = Mutex<[DefaultsError]>([])
        suite.onProblem = { problem in reported.withLock { $0.append(problem) } }
        suite.set(FileSuiteTemporaryDirectory.self, forKey: "odd")
        let problem = try #require(reported.withLock { $0.first })
        #expect(problem.kind == .unsupportedValue)
        #expect(problem.key == "odd")
        #expect(problem.message.contains("\"odd\""))
        #expect(suite.object(forKey: "odd") == nil)
    }

    @Test func defaultValueThatIsNotAPropertyListIsReportedAndTheOthersRegistered() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        let reported = Mutex<[DefaultsError]>([])
        suite.onProblem = { problem in reported.withLock { $0.append(problem) } }
        suite.register(defaults: ["odd": FileSuiteTemporaryDirectory.self, "volume": 3])
        let problem = try #require(reported.withLock { $0.first })
        #expect(problem.kind == .unsupportedValue)
        #expect(problem.key == "odd")
        #expect(problem.message.hasSuffix("it was not registered"))
        #expect(suite.object(forKey: "odd") == nil)
        #expect(suite.object(forKey: "volume") as? Int == 3)
    }

    @Test func writeOfAManagedKeyNamesTheKeyAndTheFile() throws {
        let sandbox = try AdministratorSandbox()
        let managed = sandbox.managedURL(in: sandbox.first)
        try sandbox.write(["proxy": "enforced"], to: managed)
        let suite = sandbox.suite()
        suite.set("mine", forKey: "proxy")
        let problem = try #require(suite.problems.last)
        #expect(problem.kind == .managedKey)
        #expect(problem.key == "proxy")
        #expect(problem.fileURL?.standardizedFileURL == managed.standardizedFileURL)
        #expect(suite.object(forKey: "proxy") as? String == "enforced")
    }

    @Test func transactionWithOneUnserializableValueNamesIt() throws {
        let suite = InMemorySuite()
        let store = Defaults.SnapshotStore(ErrorTestSettings(suite: suite))
        do {
            try store.write { draft in
                draft.volume = 1
                draft.holes = [1, nil]
            }
            Issue.record("the transaction stored a value with no property-list form")
        } catch let error as DefaultsError {
            #expect(error.kind == .unsupportedValue)
            #expect(error.key == "errorTestHoles")
            #expect(error.causes.isEmpty)
            #expect(error.message.contains("\"errorTestHoles\""))
            #expect(error.message.hasSuffix("the transaction stored nothing"))
        }
        #expect(suite.persistentValues().isEmpty)
    }

    @Test func transactionWithSeveralUnserializableValuesCarriesEach() throws {
        let suite = InMemorySuite()
        let store = Defaults.SnapshotStore(ErrorTestSettings(suite: suite))
        do {
            try store.write { draft in
                draft.holes = [nil]
                draft.moreHoles = [nil, 2]
            }
            Issue.record("the transaction stored values with no property-list form")
        } catch let error as DefaultsError {
            #expect(error.kind == .multiple)
            #expect(error.causes.map(\.kind) == [.unsupportedValue, .unsupportedValue])
            #expect(error.causes.map(\.key) == ["errorTestHoles", "errorTestMoreHoles"])
            #expect(error.message == "the transaction stored nothing: 2 values could not be serialized")
            let lines = error.description.split(separator: "\n")
            #expect(lines.count == 3)
            #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("- ") })
        }
        #expect(suite.persistentValues().isEmpty)
    }

    @Test func launchArgumentThatCannotBeSerializedNamesTheKey() {
        let key = Defaults.Key<[Int?]>("errorTestArgument", default: [], suite: InMemorySuite())
        do {
            _ = try Defaults.LaunchArguments().setting(key, to: [1, nil])
            Issue.record("a value with no property-list form became a launch argument")
        } catch {
            // Typed throws: `error` is a DefaultsError.
            #expect(error.kind == .unsupportedValue)
            #expect(error.key == "errorTestArgument")
            #expect(error.description.contains("Swift.Array<Swift.Optional<Swift.Int>>"))
        }
    }

    @Test func flushAllCarriesEverySuitesError() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let names = ["blocked-\(UUID().uuidString)", "blocked-\(UUID().uuidString)"]
        let suites = try names.map { name in
            try FileManager.default.createDirectory(at: directory.fileURL(name), withIntermediateDirectories: false)
            let suite = directory.suite(name)
            suite.set(1, forKey: "a")
            return suite
        }
        do {
            try Defaults.flushAll()
            Issue.record("flushAll succeeded with two suites that cannot be flushed")
        } catch {
            // Other tests' suites may fail at the same time: look for these two among the causes.
            #expect(error.kind == .multiple)
            #expect(error.message.hasSuffix("suites could not be flushed"))
            for suite in suites {
                let cause = try #require(error.causes.first { $0.suite == suite.name })
                #expect(cause.kind == .writeFailed)
                #expect(cause.fileURL?.path == suite.fileURL.path)
                #expect(error.description.contains("- Suite \"\(suite.name)\": \(cause.message)"))
            }
        }
        #expect(suites.allSatisfy { $0.object(forKey: "a") as? Int == 1 })
    }

    /// The README's problem handler.
    @Test func readmeProblemHandler() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let settings = FileSuite(name: "com.example.app", directory: directory.url)
        let printed = Mutex<[String]>([])
        settings.onProblem = { problem in
            if problem.kind == .unreadable, let backup = problem.backupURL {
                printed.withLock {
                    $0.append("\(problem.fileURL?.path ?? "") did not parse; it was moved to \(backup.path)")
                }
            }
        }
        try Data("garbage".utf8).write(to: directory.fileURL("com.example.app"))
        settings.reload()
        try await waitUntil { !printed.withLock { $0.isEmpty } }
        let first = printed.withLock { $0.first }
        let line = try #require(first)
        #expect(line.hasPrefix(directory.fileURL("com.example.app").path + " did not parse; it was moved to "))
        #expect(line.contains("com.example.app.plist.corrupt-"))
    }
}

private struct ErrorTestSettings: Defaults.SnapshotSchema {
    var volume: Defaults.Key<Int>
    var holes: Defaults.Key<[Int?]>
    var moreHoles: Defaults.Key<[Int?]>

    init(suite: InMemorySuite) {
        volume = Defaults.Key("errorTestVolume", default: 0, suite: suite)
        holes = Defaults.Key("errorTestHoles", default: [], suite: suite)
        moreHoles = Defaults.Key("errorTestMoreHoles", default: [], suite: suite)
    }
}
