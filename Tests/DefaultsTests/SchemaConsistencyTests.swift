import Defaults
import DefaultsSchema
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A schema is a file anyone may have edited: where a key's default, range or choices contradict
/// its own type, or its default its own allowed values, `KeySchema.problems` says so, and a value
/// is judged by what does not contradict itself.
@Suite("a schema's self-consistency")
struct SchemaConsistencyTests {
    static func key(
        _ type: StoredType?, default defaultValue: SchemaValue?, allowing allowed: AllowedValues? = nil
    ) -> KeySchema {
        KeySchema(name: "k", type: type, swiftType: "Swift.Int", defaultValue: defaultValue, allowedValues: allowed)
    }

    static func range(_ lowerBound: SchemaValue, _ upperBound: SchemaValue) -> AllowedValues {
        .range(lowerBound: lowerBound, upperBound: upperBound)
    }

    @Test("A key that agrees with itself has no problem, as every key the library exports")
    func consistentKeys() {
        #expect(Self.key(.integer, default: .integer(12)).problems.isEmpty)
        // An integer is a float's value, as a property list reads it.
        #expect(Self.key(.real, default: .integer(1), allowing: Self.range(.integer(0), .real(2.5))).problems.isEmpty)
        #expect(Self.key(nil, default: .string("x"), allowing: .choices([.string("x"), .integer(1)])).problems.isEmpty)
        #expect(Self.key(.integer, default: nil, allowing: Self.range(.integer(3), .integer(3))).problems.isEmpty)
        let suite = InMemorySuite(name: "consistency-\(UUID().uuidString)")
        _ = Defaults.Key<Int>("size", default: 12, suite: suite, range: 8...72)
        _ = Defaults.Key<Double>("ratio", default: 0.5, suite: suite, range: 0...1)
        _ = Defaults.Key<String>("mode", default: "fast", suite: suite, choices: ["fast", "slow"])
        #expect(Defaults.schema(of: suite).problems.isEmpty)
    }

    @Test("A default of another type, or outside its own allowed values")
    func defaults() {
        let wrongType = Self.key(.integer, default: .string("twelve"))
        #expect(wrongType.defaultValueProblem == "k is an integer (Swift.Int), and twelve is a string")
        #expect(
            wrongType.problems == [
                "the default of k does not fit it: k is an integer (Swift.Int), and twelve is a string"
            ])
        let outside = Self.key(.string, default: .string("medium"), allowing: .choices([.string("fast")]))
        #expect(
            outside.problems == [
                "the default of k does not fit it: k (Swift.Int) allows one of fast, and medium is not among them"
            ])
        let above = Self.key(.integer, default: .integer(100), allowing: Self.range(.integer(8), .integer(72)))
        #expect(above.problems.count == 1)
    }

    @Test("Bounds or choices of another type, bounds without order or the wrong way round")
    func allowedValues() {
        let strings = Self.key(.integer, default: nil, allowing: Self.range(.string("a"), .integer(9)))
        #expect(
            strings.allowedValuesProblems == [
                "the lower bound of k's range does not fit it: k is an integer (Swift.Int), and a is a string"
            ])
        let choices = Self.key(.string, default: nil, allowing: .choices([.string("a"), .integer(2), .boolean(true)]))
        #expect(choices.problems.count == 2)
        #expect(
            choices.problems.first == "a choice of k does not fit it: k is a string (Swift.Int), and 2 is an integer")
        let unordered = Self.key(nil, default: nil, allowing: Self.range(.string("a"), .integer(9)))
        #expect(unordered.problems == ["the range of k holds no value: a and 9 have no order"])
        let reversed = Self.key(.integer, default: nil, allowing: Self.range(.integer(72), .integer(8)))
        #expect(reversed.problems == ["the range of k holds no value: 72 is above 8"])
        let notANumber = Self.key(.real, default: nil, allowing: Self.range(.real(.nan), .real(1)))
        #expect(notANumber.problems.count == 1)
    }

    @Test("Allowed values that contradict themselves are not held against a value; its type still is")
    func valuesJudgedByWhatHolds() {
        let key = Self.key(.integer, default: .string("x"), allowing: Self.range(.string("a"), .string("z")))
        #expect(key.consistentAllowedValues == nil)
        #expect(key.problem(with: .integer(5)) == nil)
        #expect(key.problem(with: .string("m")) == "k is an integer (Swift.Int), and m is a string")
        // Its default is judged the same way: by its type alone.
        #expect(key.problems.count == 3)
        let consistent = Self.key(.integer, default: nil, allowing: Self.range(.integer(8), .integer(72)))
        #expect(consistent.consistentAllowedValues == consistent.allowedValues)
        #expect(consistent.problem(with: .integer(5)) != nil)
    }

    @Test("A domain's problems are its keys', key by key")
    func domainProblems() {
        let schema = DomainSchema(
            domain: "d",
            keys: [
                KeySchema(name: "b", type: .integer, swiftType: "Swift.Int", defaultValue: .boolean(true)),
                KeySchema(name: "a", type: .string, swiftType: "Swift.String", defaultValue: .integer(1)),
                KeySchema(name: "c", type: .string, swiftType: "Swift.String", defaultValue: .string("c")),
            ])
        #expect(schema.problems.count == 2)
        #expect(schema.problems.first?.hasPrefix("the default of a ") == true)
    }
}

/// `Defaults.exportSchema` writes where the `defaults` command trusts what it reads: never into a
/// directory of another user's, and never leaving another user's file in place as the schema.
@Suite("exporting a schema where it is trusted")
struct SchemaExportTrustTests {
    @Test(
        "A directory of another user's is refused; a file of another user's is replaced, even when identical",
        .enabled(if: geteuid() == 0, "needs root, to give a file to another user"))
    func anotherUsersFiles() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let suite = InMemorySuite(name: "com.example.export-trust")
        _ = Defaults.Key<Int>("a", default: 1, suite: suite)

        let theirs = base.appendingPathComponent("theirs", isDirectory: true)
        try FileManager.default.createDirectory(at: theirs, withIntermediateDirectories: true)
        #expect(chown(theirs.path, 65534, gid_t.max) == 0)
        let refused = #expect(throws: DefaultsError.self) {
            try Defaults.exportSchema(of: suite, to: theirs.appendingPathComponent("schemas"))
        }
        #expect(refused?.description.contains("cannot be trusted") == true, "\(String(describing: refused))")
        #expect(!FileManager.default.fileExists(atPath: theirs.appendingPathComponent("schemas").path))

        let mine = base.appendingPathComponent("mine", isDirectory: true)
        let url = try Defaults.exportSchema(of: suite, to: mine)
        #expect(chown(url.path, 65534, gid_t.max) == 0)
        try Defaults.exportSchema(of: suite, to: mine)
        let owner = try FileManager.default.attributesOfItem(atPath: url.path)[.ownerAccountID] as? Int
        #expect(owner.map(uid_t.init) == geteuid())
    }
}
