import Defaults
import Foundation
import TestSupport
import Testing

extension Trust {
    /// An empty (0-byte) suite file is an empty suite, as CoreFoundation reads it, once it has been
    /// empty for a while; the `defaults` command reads it the same way (see the command's tests).
    @Suite struct EmptyFileTests {
        @Test func emptyFileIsAnEmptySuite() throws {
            let directory = try FileSuiteTemporaryDirectory()
            try Data().write(to: directory.fileURL())
            // Left empty for a minute (`touch`): no program is rewriting it.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: directory.fileURL().path)
            let suite = directory.suite()
            #expect(suite.problems.isEmpty)
            #expect(suite.persistentValues().isEmpty)
            #expect(try directory.files(startingWith: "test.plist.corrupt").isEmpty)
            suite.set(1, forKey: "a")
            try suite.flush()
            #expect(try directory.storedValues()["a"] as? Int == 1)
        }

        /// Another program rewrites the file in place (truncates it, and writes a second later, as
        /// Foundation's `UserDefaults` on Linux does) while this suite writes: the suite waits for
        /// the content instead of taking the empty file as the suite, so neither's values are lost.
        @Test func aFileRewrittenInPlaceIsNotTakenEmpty() async throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite(coalescingDelay: .seconds(3600))
            suite.set("before", forKey: "mine")
            try suite.flush()
            let writer = try TestHelper.start(["in-place-rewrite", directory.fileURL().path, "100", "1000"])
            _ = try await writer.line { $0 == "empty" }
            suite.set("during", forKey: "mine")
            try suite.flush()  // merges with the file as the other program leaves it
            _ = try await writer.line { $0 == "written" }
            #expect(try await writer.finish().termination == .exited(0))
            // The suite read what the other program wrote, and its own value is kept.
            let values = suite.persistentValues()
            #expect(values["mine"] as? String == "during")
            #expect(Self.foreignKeys(in: values) == 100, "\(values.keys.count) keys")
            // The file holds the other program's 100 keys: they were not renamed over.
            let stored = try directory.storedValues()
            #expect(Self.foreignKeys(in: stored) == 100)
        }

        /// A program that opens the suite for the first time while another program rewrites the file
        /// in place (it finds the file empty) waits for the content before it writes: it does not
        /// take the empty file for the suite, and its write keeps the other program's 100 keys.
        @Test func aProgramOpeningTheSuiteDuringAnInPlaceRewriteKeepsTheOtherWritersValues() async throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite(coalescingDelay: .seconds(3600))
            suite.set("before", forKey: "earlier")
            try suite.flush()
            for round in 0..<3 {
                let writer = try TestHelper.start(["in-place-rewrite", directory.fileURL().path, "100", "1000"])
                _ = try await writer.line { $0 == "empty" }
                // A new process: it has never seen the file's values.
                let opener = try TestHelper.start(
                    ["filesuite-set", directory.path, "test", "opened\(round)", "yes"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
                #expect(try await opener.finish().termination == .exited(0))
                _ = try await writer.line { $0 == "written" }
                #expect(try await writer.finish().termination == .exited(0))
                let stored = try directory.storedValues()
                #expect(Self.foreignKeys(in: stored) == 100, "round \(round): \(stored.keys.count) keys")
                #expect(stored["opened\(round)"] as? String == "yes", "round \(round)")
            }
        }

        /// How many of the other program's keys `values` holds.
        static func foreignKeys(in values: [String: Any]) -> Int {
            (0..<100).filter { (index: Int) -> Bool in (values["foreign-" + String(index)] as? Int) == index }.count
        }
    }
}
