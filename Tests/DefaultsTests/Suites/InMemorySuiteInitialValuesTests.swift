import Defaults
import Foundation
import Testing

/// `InMemorySuite(values:)` holds to the rule of every write: a value with no property-list form
/// is reported, not dropped without a word, and the other values are kept.
@Suite
struct InMemorySuiteInitialValuesTests {
    /// What is not a property-list object.
    struct Unsupported {}

    @Test("A value that is not a property-list object is reported as set reports it; the others are stored")
    func unsupportedInitialValueReported() throws {
        let suite = InMemorySuite(values: ["volume": 3, "window": Unsupported(), "name": "main"])
        #expect(suite.object(forKey: "volume") as? Int == 3)
        #expect(suite.object(forKey: "name") as? String == "main")
        #expect(suite.object(forKey: "window") == nil)
        #expect(suite.persistentValues().keys.sorted() == ["name", "volume"])

        let problem = try #require(suite.problems.first)
        #expect(suite.problems.count == 1)
        #expect(problem.kind == .unsupportedValue)
        #expect(problem.key == "window")
        #expect(problem.suite == suite.name)
        #expect(problem.message.contains("Unsupported"), "\(problem.message)")

        // The same report as a write of that value through `set`.
        suite.set(Unsupported(), forKey: "window")
        #expect(suite.problems.count == 2)
        #expect(suite.problems.last?.message == problem.message)
    }

    @Test("Property-list values, nested ones too, are stored with no problem")
    func supportedInitialValues() {
        let suite = InMemorySuite(values: [
            "list": [1, 2], "table": ["a": Data([1])], "date": Date(timeIntervalSince1970: 0),
        ])
        #expect(suite.problems.isEmpty)
        #expect(suite.object(forKey: "list") as? [Int] == [1, 2])
        #expect((suite.object(forKey: "table") as? [String: Data])?["a"] == Data([1]))
    }

    @Test("A collection holding a value with no property-list form is reported whole")
    func unsupportedNestedValueReported() {
        let suite = InMemorySuite(values: ["list": [1, Unsupported()] as [Any]])
        #expect(suite.object(forKey: "list") == nil)
        #expect(suite.problems.map(\.kind) == [.unsupportedValue])
        #expect(suite.problems.first?.key == "list")
    }
}
