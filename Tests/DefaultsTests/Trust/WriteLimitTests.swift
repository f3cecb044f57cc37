@_spi(Testing) import Defaults
import DefaultsFiles
import Foundation
import Synchronization
import TestSupport
import Testing

extension Trust {
    /// The writer refuses what the reader would refuse: a value that would make the suite's file
    /// larger than any reader takes is not written, and every other value is.
    @Suite struct WriteLimitTests {
        final class Problems: Sendable {
            private let problems = Mutex<[DefaultsError]>([])
            var all: [DefaultsError] { problems.withLock { $0 } }
            func append(_ problem: DefaultsError) { problems.withLock { $0.append(problem) } }
        }

        final class Counter: Sendable {
            private let count = Mutex(0)
            var value: Int { count.withLock { $0 } }
            func increment() { count.withLock { $0 += 1 } }
        }

        @Test func aValueTheFileCouldNotHoldIsRefusedAndEveryOtherValueIsWritten() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite()
            suite.set("stored", forKey: "big")
            suite.set("kept", forKey: "small")
            try suite.flush()
            let problems = Problems()
            suite.onProblem = { problems.append($0) }
            let changesOfBig = Counter()
            let token = suite.changes.addObserver { change in
                if change.keys.contains("big") {
                    changesOfBig.increment()
                }
            }
            defer { suite.changes.removeObserver(token) }

            // 50 MB of data is 67 MB of base64: more than the 64 MB a reader takes.
            suite.set(Data(count: 50 << 20), forKey: "big")
            suite.set("written", forKey: "other")
            try suite.flush()

            // Reported by whichever write met the value first: the flush, or the suite's own
            // scheduled write, whose report may come a moment later.
            let refusal = try poll("the refusal reported") { problems.all.first }
            #expect(problems.all.count == 1)
            #expect(refusal.kind == .tooLarge && refusal.key == "big", "\(refusal)")
            #expect(refusal.message.contains("64 MB"), "\(refusal.message)")
            #expect(suite.object(forKey: "big") as? String == "stored", "the key keeps its stored value")
            try waitUntil("the refused value seen, then the stored one again") { changesOfBig.value >= 2 }
            #expect(changesOfBig.value == 2)

            // The next launch reads every value: the file was never made unreadable.
            let reopened = FileSuite(name: "test", directory: directory.url)
            #expect(reopened.problems.isEmpty, "\(reopened.problems)")
            #expect(reopened.object(forKey: "big") as? String == "stored")
            #expect(reopened.object(forKey: "small") as? String == "kept")
            #expect(reopened.object(forKey: "other") as? String == "written")
            let size = try FileManager.default.attributesOfItem(atPath: directory.fileURL().path)[.size] as? Int
            #expect((size ?? .max) < BoundedFileRead.sizeLimit)
            // And later writes go on.
            reopened.set("later", forKey: "small")
            try reopened.flush()
        }

        @Test func manyValuesTogetherOverTheLimitKeepTheSmallerOnes() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite()
            let problems = Problems()
            suite.onProblem = { problems.append($0) }
            // Three values of 22 MB encoded each: two fit, the third cannot.
            let large = String(repeating: "x", count: 22 << 20)
            suite.setValues([("a", large), ("b", large + "y"), ("c", large), ("d", "small")])
            try suite.flush()
            #expect(problems.all.map(\.kind) == [.tooLarge], "\(problems.all.map(\.message))")
            let refused = try #require(problems.all.first?.key)
            #expect(refused == "b", "the largest is refused first")
            let reopened = FileSuite(name: "test", directory: directory.url)
            #expect(reopened.problems.isEmpty)
            #expect(reopened.object(forKey: "b") == nil)
            #expect((reopened.object(forKey: "a") as? String)?.count == large.count)
            #expect(reopened.object(forKey: "d") as? String == "small")
        }
    }
}
