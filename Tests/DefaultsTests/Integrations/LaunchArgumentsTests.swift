import Defaults
import Foundation
import TestSupport
import Testing

private struct Profile: Codable, Hashable, Defaults.Serializable {
    var name: String
    var level: Int
}

private enum Theme: String, Defaults.Serializable {
    case light, dark
}

extension Integrations {
    @Suite(.mayBlock) struct LaunchArgumentsTests {
        @Test func encodesXMLFragments() throws {
            let suite = InMemorySuite()
            var overrides = Defaults.LaunchArguments()
            try overrides.set(Defaults.Key<Int>("count", default: 0, suite: suite), to: 5)
            try overrides.set(Defaults.Key<String?>("nickname", suite: suite), to: nil)
            try overrides.set(Defaults.Key<Bool>("flag", default: false, suite: suite), to: true)
            try overrides.set(Defaults.Key<Int>("count", default: 0, suite: suite), to: 6)
            #expect(
                overrides.arguments == [
                    "-count", "<integer>6</integer>",
                    "-nickname", "<swift-defaults:absent/>",
                    "-flag", "<true/>",
                ]
            )
            overrides.remove(Defaults.Key<Bool>("flag", default: false, suite: suite))
            #expect(overrides.arguments.count == 4)
            #expect(!overrides.isEmpty)
        }

        /// Every kind of value, read back through a suite's arguments domain in this process.
        @Test func everyTypeReadsBackThroughTheArgumentsDomain() throws {
            let writer = InMemorySuite()
            func check<Value: Defaults.Serializable & Equatable>(_ value: Value, default defaultValue: Value) throws {
                let name = "value\(UUID().uuidString.prefix(8))"
                let key = Defaults.Key(name, default: defaultValue, suite: writer)
                let arguments = try Defaults.LaunchArguments().setting(key, to: value).arguments
                let reader = InMemorySuite(arguments: arguments)
                #expect(Defaults[key.in(reader)] == value, "\(Value.self): \(arguments)")
                #expect(reader.persistentValues().isEmpty)
            }
            try check(42, default: 0)
            try check(-7.25, default: 0)
            try check("tab\t newline\n <xml> & \"quotes\" é 🎉", default: "")
            try check("", default: "x")
            try check(true, default: false)
            try check(Date(timeIntervalSince1970: 1_700_000_000), default: Date(timeIntervalSince1970: 0))
            try check(Data([0, 1, 255]), default: Data())
            try check(URL(string: "https://example.com/a?b=1")!, default: URL(fileURLWithPath: "/"))
            try check(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, default: UUID())
            try check(Profile(name: "Ada", level: 3), default: Profile(name: "", level: 0))
            try check(Theme.dark, default: .light)
            try check([1, 2, 3], default: [])
            try check(Set(["a", "b"]), default: [])
            try check(["a": [1, 2], "b": []], default: [String: [Int]]())
            try check([["x": Profile(name: "n", level: 1)]], default: [])
            try check(Int?.some(4), default: nil)
            try check(1..<5, default: 0..<1)
        }

        @Test func nilHidesTheStoredValueButNotTheRegisteredDefault() throws {
            let name = Defaults.Key<String?>("name", suite: InMemorySuite())
            let level = Defaults.Key<Int>("level", default: 3, suite: InMemorySuite())
            let arguments = try Defaults.LaunchArguments()
                .setting(name, to: nil)
                .setting(Defaults.Key<Int?>("level", suite: InMemorySuite()), to: nil)
                .arguments
            let reader = InMemorySuite(values: ["name": "stored", "level": 9], arguments: arguments)
            #expect(Defaults[name.in(reader)] == nil)
            #expect(Defaults[level.in(reader)] == 3)
            #expect(reader.object(forKey: "name") == nil)
            // Writes go to the persistent domain; the override still wins.
            Defaults[name.in(reader)] = "new"
            #expect(Defaults[name.in(reader)] == nil)
            #expect(reader.persistentValues()["name"] as? String == "new")
        }

        @Test func unserializableValueThrows() {
            let key = Defaults.Key<[Int?]>("holes", default: [], suite: InMemorySuite())
            #expect(throws: DefaultsError.self) {
                try Defaults.LaunchArguments().setting(key, to: [1, nil])
            }
        }

        /// A real child process started with overrides reads them through a file suite and through
        /// Foundation's `UserDefaults`, and writes nothing.
        @Test func childProcessReadsOverridesAndWritesNothing() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("launch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let suiteName = "launch-arguments"

            // What is stored before the child starts, including a value for the key set to nil.
            let stored = FileSuite(name: suiteName, directory: directory, arguments: [])
            stored.set("stored nickname", forKey: "nickname")
            stored.set(1, forKey: "count")
            try stored.flush()
            let fileBefore = try Data(contentsOf: stored.fileURL)
            let listingBefore = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()

            let keys = InMemorySuite()
            let overrides = try Defaults.LaunchArguments()
                .setting(Defaults.Key<Int>("count", default: 0, suite: keys), to: 42)
                .setting(Defaults.Key<String>("greeting", default: "", suite: keys), to: "Hello, <world> & \"you\"")
                .setting(
                    Defaults.Key("profile", default: Profile(name: "", level: 0), suite: keys),
                    to: Profile(name: "Ada", level: 7)
                )
                .setting(
                    Defaults.Key<[String: [Int]]>("scores", default: [:], suite: keys),
                    to: ["a": [1, 2], "b": [], "c": [3]]
                )
                .setting(Defaults.Key<String?>("nickname", suite: keys), to: nil)

            let result = try TestHelper.run(
                ["launch-arguments-read", directory.path, suiteName] + overrides.arguments,
                environment: ["XDG_CONFIG_HOME": directory.path]
            )
            #expect(result.status == 0, "\(result.error)")
            let lines = result.output.split(separator: "\n").map(String.init)
            for prefix in ["file", "userdefaults"] {
                #expect(lines.contains("\(prefix).count=42"))
                #expect(lines.contains(#"\#(prefix).greeting="Hello, <world> & \"you\"""#))
                #expect(lines.contains("\(prefix).profile=Ada|7"))
                #expect(lines.contains("\(prefix).scores=a:[1, 2];b:[];c:[3]"))
                #expect(lines.contains("\(prefix).nickname=nil"))
            }
            #expect(lines.count == 10, "\(result.output)")

            #expect(try Data(contentsOf: stored.fileURL) == fileBefore)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == listingBefore)
            stored.reload()
            #expect(stored.object(forKey: "nickname") as? String == "stored nickname")
            #expect(stored.object(forKey: "count") as? Int == 1)
        }
    }
}
