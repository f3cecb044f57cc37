import Defaults
import DefaultsPropertyList
import Foundation
import Testing

/// Suites keep values as `PropertyListValue`s: what goes in as Foundation objects comes out as the
/// library's plain Swift objects, unchanged by a trip to the file, and what has no property-list
/// form is refused without losing what was stored.
@Suite("Stored values")
struct StoredValueTests {
    /// One value of each kind, as Foundation hands them out.
    static var foundationValues: [String: Any] {
        [
            "flag": NSNumber(value: true),
            "count": NSNumber(value: 42),
            "large": NSNumber(value: UInt64.max),
            "ratio": NSNumber(value: Double.nan),
            "name": NSString(string: "é & <tag>"),
            "when": NSDate(timeIntervalSinceReferenceDate: 700_000_000),
            "bytes": NSData(data: Data([0, 255])),
            "nested": NSDictionary(dictionary: ["list": NSArray(array: [1, "two", NSNumber(value: false)])]),
        ]
    }

    static let expected = PropertyListValue.dictionary([
        "flag": .boolean(true),
        "count": .integer(42),
        "large": .unsignedInteger(UInt64.max),
        "ratio": .real(.nan),
        "name": .string("é & <tag>"),
        "when": .date(Date(timeIntervalSinceReferenceDate: 700_000_000)),
        "bytes": .data(Data([0, 255])),
        "nested": .dictionary(["list": .array([.integer(1), .string("two"), .boolean(false)])]),
    ])

    @Test func fileSuiteKeepsEveryKindThroughTheFile() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite("stored-kinds")
        for (key, value) in Self.foundationValues {
            suite.set(value, forKey: key)
        }
        #expect(suite.problems.isEmpty)
        #expect(try PropertyListValue(suite.persistentValues()) == Self.expected)
        #expect(PropertyListValue.dictionary(suite.persistentStoredValues()) == Self.expected)
        // Plain Swift objects come out, not the Foundation objects that went in.
        #expect(suite.object(forKey: "flag").map { type(of: $0) == Bool.self } == true)
        #expect(suite.object(forKey: "large") as? UInt64 == UInt64.max)
        try suite.flush()

        let reopened = directory.suite("stored-kinds")
        #expect(PropertyListValue.dictionary(reopened.persistentStoredValues()) == Self.expected)
        #expect(try PropertyListValue(directory.storedValues("stored-kinds")) == Self.expected)
    }

    @Test func inMemorySuiteKeepsEveryKind() throws {
        let suite = InMemorySuite(name: "stored-kinds-\(UUID().uuidString)", values: Self.foundationValues)
        #expect(try PropertyListValue(suite.persistentValues()) == Self.expected)
        #expect(suite.object(forKey: "count") as? Int == 42)
    }

    /// A value with no property-list form is not stored, and the value it would have replaced is
    /// kept (a write never loses what was there).
    @Test func aValueWithNoPropertyListFormIsRefusedAndNothingIsLost() throws {
        let memory = InMemorySuite(name: "refused-\(UUID().uuidString)")
        memory.set("kept", forKey: "key")
        memory.set(URL(fileURLWithPath: "/tmp"), forKey: "key")
        memory.set(["nested": [NSObject()]], forKey: "other")
        #expect(memory.object(forKey: "key") as? String == "kept")
        #expect(memory.object(forKey: "other") == nil)

        let directory = try FileSuiteTemporaryDirectory()
        let file = directory.suite("refused")
        file.set("kept", forKey: "key")
        file.set(URL(fileURLWithPath: "/tmp"), forKey: "key")
        #expect(file.object(forKey: "key") as? String == "kept")
        let problem = try #require(file.problems.last)
        #expect(problem.kind == .unsupportedValue)
        #expect(problem.message.contains("key"))
    }

    /// `AnySerializable` holds a `PropertyListValue`: its equality and hashing are the
    /// property-list ones (`NaN` equals `NaN`; `1`, `1.0` and `true` differ).
    @Test func anySerializableComparesAsPropertyListValues() {
        let nan = Defaults.AnySerializable(Double.nan)
        #expect(nan == Defaults.AnySerializable(Double.nan))
        #expect(nan.hashValue == Defaults.AnySerializable(Double.nan).hashValue)
        let values: Set<Defaults.AnySerializable> = [1, 1.0, true, "1", 1]
        #expect(values.count == 4)
        #expect(Defaults.AnySerializable(["a": 1]).get() == ["a": 1])
    }
}
