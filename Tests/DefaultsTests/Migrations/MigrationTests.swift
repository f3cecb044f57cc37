@_spi(Testing) import Defaults
import DefaultsSchema
import Foundation
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test func renameMovesTheValueInOneWriteAndAgainChangesNothing() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["textSize": 14, "other": "kept"])
        let suite = directory.suite()
        let key = Defaults.Key<Int>("fontSize", default: 12, suite: suite, migrating: .renamed(from: "textSize"))
        #expect(Defaults[key] == 14)
        #expect(suite.writeCount == 1)
        let stored = try directory.storedValues()
        #expect(stored["fontSize"] as? Int == 14)
        #expect(stored["textSize"] == nil)
        #expect(stored["other"] as? String == "kept")

        // The next start of the program: nothing to do, nothing written.
        let before = try directory.fileData()
        let reopened = directory.suite()
        let again = Defaults.Key<Int>("fontSize", default: 12, suite: reopened, migrating: .renamed(from: "textSize"))
        #expect(Defaults[again] == 14)
        try reopened.flush()
        #expect(reopened.writeCount == 0)
        #expect(try directory.fileData() == before)
    }

    @Test func aValueAlreadyAtTheNewNameWinsAndTheOldOneStays() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["textSize": 14, "fontSize": 20])
        let suite = directory.suite()
        let key = Defaults.Key<Int>("fontSize", default: 12, suite: suite, migrating: .renamed(from: "textSize"))
        #expect(Defaults[key] == 20)
        try suite.flush()
        #expect(suite.writeCount == 0)
        let stored = try directory.storedValues()
        #expect(stored["fontSize"] as? Int == 20)
        #expect(stored["textSize"] as? Int == 14)
        #expect(suite.problems.isEmpty)
    }

    @Test func anIntegerBecomesADoubleInPlaceAndUnderANewName() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["ratio": 3, "oldScale": 2])
        let suite = directory.suite()
        let ratio = Defaults.Key<Double>("ratio", default: 0, suite: suite, migrating: .changedType(from: Int.self))
        let scale = Defaults.Key<Double>("scale", default: 1, suite: suite, migrating: .renamed(from: "oldScale"))
        #expect(Defaults[ratio] == 3)
        #expect(Defaults[scale] == 2)
        let stored = try directory.storedValues()
        #expect(stored["ratio"].map { type(of: $0) == Double.self } == true)
        #expect(stored["scale"] as? Double == 2)
        #expect(stored["oldScale"] == nil)
    }

    @Test func aStringBecomesAnEnum() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["sizeName": "large"])
        let suite = directory.suite()
        let size = Defaults.Key<MigrationTestSize>(
            "size", default: .small, suite: suite, migrating: .renamed(from: "sizeName"))
        #expect(Defaults[size] == .large)
        let stored = try directory.storedValues()
        #expect(stored["size"] as? String == "large")
        #expect(stored["sizeName"] == nil)
    }

    @Test func aCodableValueStoredAsJSONBecomesANativePropertyList() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["window": #"{"height":2,"width":1}"#])
        let suite = directory.suite()
        let window = Defaults.Key<MigrationTestWindow>(
            "window", default: MigrationTestWindow(width: 0, height: 0), suite: suite,
            migrating: .changedType(from: String.self))
        #expect(Defaults[window] == MigrationTestWindow(width: 1, height: 2))
        let stored = try directory.storedValues()
        let dictionary = try #require(stored["window"] as? [String: Any])
        #expect(dictionary["width"] as? Int == 1)
        #expect(dictionary["height"] as? Int == 2)
        #expect(suite.writeCount == 1)

        let reopened = directory.suite()
        _ = Defaults.Key<MigrationTestWindow>(
            "window", default: MigrationTestWindow(width: 0, height: 0), suite: reopened,
            migrating: .changedType(from: String.self))
        try reopened.flush()
        #expect(reopened.writeCount == 0)
    }

    @Test func aValueThatCannotBeConvertedIsKeptAndReported() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["greetingCode": 2, "count": "many", "other": 1])
        let suite = directory.suite()
        let greeting = Defaults.Key<String>(
            "greeting", default: "none", suite: suite,
            migrating: .converted(from: "greetingCode", as: Int.self) { $0 == 1 ? "hello" : nil })
        let count = Defaults.Key<Int>("newCount", default: 0, suite: suite, migrating: .renamed(from: "count"))
        #expect(Defaults[greeting] == "none")
        #expect(Defaults[count] == 0)
        try suite.flush()
        let stored = try directory.storedValues()
        #expect(stored["greetingCode"] as? Int == 2)
        #expect(stored["count"] as? String == "many")
        #expect(stored["greeting"] == nil)
        let problems = suite.problems.filter { $0.kind == .wrongType }
        #expect(Set(problems.compactMap(\.key)) == ["greetingCode", "count"])
        #expect(problems.allSatisfy { $0.message.contains("kept") })
    }

    @Test func aConversionClosureMigratesTheValue() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["greetingCode": 1])
        let suite = directory.suite()
        let greeting = Defaults.Key<String>(
            "greeting", default: "none", suite: suite,
            migrating: .converted(from: "greetingCode", as: Int.self) { $0 == 1 ? "hello" : nil })
        #expect(Defaults[greeting] == "hello")
        #expect(try directory.storedValues()["greetingCode"] == nil)
    }

    /// Version 1 stored an integer, version 2 a string, version 3 an enum: each stored form
    /// finds the step that converts it, newest first.
    @Test func everyStepOfANameIsTriedNewestFirst() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try directory.writeOldFile(["fromOne": 2, "fromTwo": "large", "renamedFromOne": 1])
        let suite = directory.suite()
        let migration: Defaults.Migration<MigrationTestSize> = [
            .changedType(from: String.self),
            .converted(as: Int.self) { $0 == 1 ? .small : $0 == 2 ? .large : nil },
        ]
        let fromOne = Defaults.Key<MigrationTestSize>("fromOne", default: .small, suite: suite, migrating: migration)
        let fromTwo = Defaults.Key<MigrationTestSize>("fromTwo", default: .small, suite: suite, migrating: migration)
        let renamed = Defaults.Key<MigrationTestSize>(
            "renamed", default: .large, suite: suite,
            migrating: [
                .renamed(from: "renamedFromOne"),
                .converted(from: "renamedFromOne", as: Int.self) { $0 == 1 ? .small : nil },
            ])
        #expect(Defaults[fromOne] == .large)
        #expect(Defaults[fromTwo] == .large)
        #expect(Defaults[renamed] == .small)
        #expect(suite.problems.isEmpty, "\(suite.problems)")
    }

    @Test func manyKeysMigratedTogetherWriteTheFileOnce() throws {
        let directory = try FileSuiteTemporaryDirectory()
        var old: [String: Any] = [:]
        for index in 0..<1_000 {
            old["old\(index)"] = index
        }
        try directory.writeOldFile(old)
        let suite = directory.suite()
        var keys: [Defaults.Key<Int>] = []
        Defaults.migrate(
            (0..<1_000).map { index in
                let key = Defaults.Key<Int>(
                    "new\(index)", default: -1, suite: suite, migrating: .renamed(from: "old\(index)"))
                keys.append(key)
                return key
            })
        #expect(suite.writeCount == 1)
        #expect(keys.allSatisfy { Defaults[$0] == Int($0.name.dropFirst(3)) })
        let stored = try directory.storedValues()
        #expect(stored.count == 1_000)
        #expect(stored.keys.allSatisfy { $0.hasPrefix("new") })
    }

    @Test func theSchemaListsFormerNamesAndOldSchemasStillDecode() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        _ = Defaults.Key<Int>("c", default: 0, suite: suite, migrating: .renamed(from: "b", "a"))
        _ = Defaults.Key<Int>("plain", default: 0, suite: suite)
        let schemas = Defaults.KeyRegistry.declarations(in: suite).map(\.schema)
        #expect(schemas.first { $0.name == "c" }?.formerNames == ["b", "a"])
        #expect(schemas.first { $0.name == "plain" }?.formerNames == nil)

        let old = #"{"name":"size","type":"integer","swiftType":"Swift.Int","isDefaultDynamic":false,"iCloud":false}"#
        let decoded = try JSONDecoder().decode(KeySchema.self, from: Data(old.utf8))
        #expect(decoded.formerNames == nil)
        let encoded = String(decoding: try JSONEncoder().encode(schemas.first { $0.name == "plain" }), as: UTF8.self)
        #expect(!encoded.contains("formerNames"))
    }
}
