@_spi(Testing) import Defaults
import Foundation
import Synchronization
import Testing

@Suite("FileSuite transactions")
struct FileSuiteTransactionTests {
    @Test func valuesWrittenTogetherPostOneChangeAndOneFileWrite() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite(coalescingDelay: .seconds(3600))
        suite.set(1, forKey: "unchanged")
        try suite.flush()
        let events = Mutex<[SuiteChange]>([])
        let token = suite.changes.addObserver { change in events.withLock { $0.append(change) } }
        defer { suite.changes.removeObserver(token) }

        suite.setValues([("a", 1), ("b", "two"), ("unchanged", 1), ("a", 3)])
        try suite.flush()

        #expect(events.withLock { $0 } == [SuiteChange(keys: ["a", "b"])])
        #expect(suite.writeCount == 2)
        let stored = try directory.storedValues()
        #expect(stored["a"] as? Int == 3)
        #expect(stored["b"] as? String == "two")
    }

    @Test func aValueThatIsNotAPropertyListChangesNothing() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.setValues([("a", 1), ("b", NSObject())])
        #expect(suite.object(forKey: "a") == nil)
        #expect(suite.problems.last?.kind == .unsupportedValue)
    }
}
