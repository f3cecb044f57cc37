import Defaults
import Foundation
import Testing

/// Every built-in type survives a write and a read, in every kind of suite, a file suite included.
@Suite("Built-in types")
struct BuiltinTypesTests {
    enum Fruit: String, Defaults.Serializable {
        case apple, banana
    }

    enum Level: Int, Defaults.Serializable {
        case low = 1
        case high = 9
    }

    struct Point: Codable, Hashable, Defaults.Serializable {
        var x: Double
        var y: Double
    }

    final class NestedSecret: NSObject, NSSecureCoding, Defaults.Serializable {
        static var supportsSecureCoding: Bool { true }
        override init() {}
        required init?(coder: NSCoder) {}
        func encode(with coder: NSCoder) {}
    }

    func roundTrip<Value: Defaults.Serializable & Equatable>(
        _ value: Value,
        default defaultValue: Value,
        in suite: any DefaultsSuite,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let key = Defaults.Key<Value>("value\(UUID().uuidString.prefix(8))", default: defaultValue, suite: suite)
        #expect(Defaults[key] == defaultValue, sourceLocation: sourceLocation)
        Defaults[key] = value
        #expect(Defaults[key] == value, sourceLocation: sourceLocation)
        // A second key object reading the same name decodes the stored value, not a cached one.
        let again = Defaults.Key<Value>(key.name, default: defaultValue, suite: suite)
        #expect(Defaults[again] == value, sourceLocation: sourceLocation)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func integers(kind: SuiteKind) {
        let suite = kind.make()
        roundTrip(Int.min, default: 0, in: suite)
        roundTrip(Int8.min, default: 0, in: suite)
        roundTrip(Int16.max, default: 0, in: suite)
        roundTrip(Int32.min, default: 0, in: suite)
        roundTrip(Int64.max, default: 0, in: suite)
        roundTrip(UInt.max, default: 0, in: suite)
        roundTrip(UInt8.max, default: 0, in: suite)
        roundTrip(UInt16.max, default: 0, in: suite)
        roundTrip(UInt32.max, default: 0, in: suite)
        roundTrip(UInt64.max, default: 0, in: suite)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func floatingPoint(kind: SuiteKind) {
        let suite = kind.make()
        roundTrip(0.1, default: 0.0, in: suite)
        roundTrip(Float(2.5), default: 0, in: suite)
        roundTrip(CGFloat(-7.25), default: 0, in: suite)
        roundTrip(Double.infinity, default: 0, in: suite)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func scalars(kind: SuiteKind) {
        let suite = kind.make()
        roundTrip(true, default: false, in: suite)
        roundTrip("🦄 <&> \"quoted\"", default: "", in: suite)
        roundTrip(Date(timeIntervalSince1970: 1_700_000_000), default: Date(timeIntervalSince1970: 0), in: suite)
        roundTrip(Data([0, 1, 2, 255]), default: Data(), in: suite)
        roundTrip(URL(string: "https://example.com/a?b=c#d")!, default: URL(string: "file:///tmp")!, in: suite)
        roundTrip(URL(fileURLWithPath: "/tmp/some file"), default: URL(string: "file:///tmp")!, in: suite)
        roundTrip(UUID(), default: UUID(), in: suite)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func rangesEnumsAndCoding(kind: SuiteKind) {
        let suite = kind.make()
        roundTrip(1..<10, default: 0..<1, in: suite)
        roundTrip(2.5...3.5, default: 0...1, in: suite)
        roundTrip(Fruit.banana, default: .apple, in: suite)
        roundTrip(Level.high, default: .low, in: suite)
        roundTrip(Point(x: 1, y: -2), default: Point(x: 0, y: 0), in: suite)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func secureCoding(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Secret?>("secret", suite: suite)
        #expect(Defaults[key] == nil)
        Defaults[key] = Secret(code: "1234")
        #expect(Defaults[key]?.code == "1234")
        #expect(suite.object(forKey: "secret") is Data)
    }

    @Test func secureCodingOfANestedClassIsRefusedWithoutACrash() {
        let suite = InMemorySuite()
        let key = Defaults.Key<NestedSecret?>("nested", suite: suite)
        Defaults[key] = NestedSecret()
        #if canImport(Darwin)
        #expect(Defaults[key] != nil)
        #else
        #expect(Defaults[key] == nil)
        #expect(suite.object(forKey: "nested") == nil)
        #endif
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func optionalsAndCollections(kind: SuiteKind) {
        let suite = kind.make()
        roundTrip(Int?.some(3), default: nil, in: suite)
        roundTrip([1, 2, 3], default: [], in: suite)
        roundTrip(Set(["a", "b"]), default: [], in: suite)
        roundTrip(["a": 1, "b": 2], default: [:], in: suite)
        roundTrip([1: "one", 2: "two"], default: [:], in: suite)
        roundTrip([Point(x: 1, y: 2)], default: [], in: suite)
        roundTrip([Fruit.apple: 1].mapKeys(\.rawValue), default: [:], in: suite)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func storedForms(kind: SuiteKind) {
        let suite = kind.make()
        // What lands in the suite is plain property-list data other programs can read.
        let point = Defaults.Key<Point>("point", default: Point(x: 0, y: 0), suite: suite)
        Defaults[point] = Point(x: 1, y: 2)
        #expect(suite.object(forKey: "point") as? String == #"{"x":1,"y":2}"#)
        let fruit = Defaults.Key<Fruit>("fruit", default: .apple, suite: suite)
        Defaults[fruit] = .banana
        #expect(suite.object(forKey: "fruit") as? String == "banana")
        let range = Defaults.Key<Range<Int>>("range", default: 0..<1, suite: suite)
        Defaults[range] = 3..<5
        #expect(suite.object(forKey: "range") as? [Int] == [3, 5])
        let uuid = Defaults.Key<UUID?>("uuid", suite: suite)
        let value = UUID()
        Defaults[uuid] = value
        #expect(suite.object(forKey: "uuid") as? String == value.uuidString)
    }
}

extension Dictionary {
    fileprivate func mapKeys<NewKey: Hashable>(_ transform: (Key) -> NewKey) -> [NewKey: Value] {
        [NewKey: Value](uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}

/// Top-level: Foundation on Linux archives only top-level classes.
final class Secret: NSObject, NSSecureCoding, Defaults.Serializable {
    static var supportsSecureCoding: Bool { true }
    let code: String

    init(code: String) { self.code = code }

    required init?(coder: NSCoder) {
        guard let code = coder.decodeObject(of: NSString.self, forKey: "code") else { return nil }
        self.code = code as String
    }

    func encode(with coder: NSCoder) { coder.encode(code as NSString, forKey: "code") }
}
