import Defaults
import Foundation
import Testing

// The examples of the README (and of the Defaults README it follows), as written there.
// They use the standard suite, so they run one at a time and reset what they touch.

extension Defaults.Keys {
    static let quality = Key<Double>("quality", default: 0.8)
    static let readmeName = Key<Double?>("readmeName")
    static let defaultDuration = Key<DurationKeys>("defaultDuration", default: .oneHour)
    static let user = Key<User>("user", default: .init(name: "Hello", age: "24"))
    static let isUnicornMode = Key<Bool>("isUnicornMode", default: true)
    static let magic = Key<[String: Defaults.AnySerializable]>("magic", default: [:])
    static let bridgedUser = Defaults.Key<BridgedUser>("bridgedUser", default: BridgedUser(name: "Hello", age: "24"))
    static let arrayUser = Defaults.Key<[BridgedUser]>("arrayUser", default: [BridgedUser(name: "Hello", age: "24")])
    static let setUser = Defaults.Key<Set<BridgedUser>>(
        "setUser", default: Set([BridgedUser(name: "Hello", age: "24")]))
    static let dictionaryUser = Defaults.Key<[String: BridgedUser]>(
        "dictionaryUser",
        default: ["user": BridgedUser(name: "Hello", age: "24")]
    )
    static let stringBag = Key<Bag<String>>("stringBag", default: Bag(["Hello", "World!"]))
    static let stringSet = Key<SetBag<String>>("stringSet", default: SetBag(["Hello", "World!"]))
    static let sessionID = Key<UUID>("sessionID") { UUID() }
    static let window = Key<WindowState>("window", default: WindowState(width: 800, height: 600, tabs: ["home"]))
}

enum DurationKeys: String, Defaults.Serializable {
    case tenMinutes = "10 Minutes"
    case halfHour = "30 Minutes"
    case oneHour = "1 Hour"
}

struct User: Codable, Defaults.Serializable {
    let name: String
    let age: String
}

struct BridgedUser: Hashable {
    let name: String
    let age: String
}

struct BridgedUserBridge: Defaults.Bridge {
    typealias Value = BridgedUser
    typealias Serializable = [String: String]

    public func serialize(_ value: Value?) -> Serializable? {
        guard let value else {
            return nil
        }
        return [
            "name": value.name,
            "age": value.age,
        ]
    }

    public func deserialize(_ object: Serializable?) -> Value? {
        guard
            let object,
            let name = object["name"],
            let age = object["age"]
        else {
            return nil
        }
        return BridgedUser(name: name, age: age)
    }
}

extension BridgedUser: Defaults.Serializable {
    static let bridge = BridgedUserBridge()
}

enum mime: String, Defaults.Serializable {  // swiftlint:disable:this type_name
    case JSON = "application/json"
    case STREAM = "application/octet-stream"
}

enum PreferredMime: String, Codable, Defaults.Serializable, Defaults.PreferRawRepresentable {
    case JSON = "application/json"
}

enum CodedMime: String, Codable, Defaults.Serializable {
    case JSON = "application/json"
}

struct WindowState: Codable, Equatable, Defaults.Serializable, Defaults.PreferPropertyList {
    var width: Int
    var height: Int
    var tabs: [String]
}

struct Bag<Element: Defaults.Serializable>: Collection {
    var items: [Element]
    var startIndex: Int { items.startIndex }
    var endIndex: Int { items.endIndex }

    mutating func insert(element: Element, at: Int) {
        items.insert(element, at: at)
    }

    func index(after index: Int) -> Int {
        items.index(after: index)
    }

    subscript(position: Int) -> Element {
        items[position]
    }
}

extension Bag: Defaults.CollectionSerializable {
    init(_ elements: [Element]) {
        self.items = elements
    }
}

struct SetBag<Element: Defaults.Serializable & Hashable>: SetAlgebra {
    var store = Set<Element>()

    init() {}

    init(_ store: Set<Element>) {
        self.store = store
    }

    func contains(_ member: Element) -> Bool {
        store.contains(member)
    }

    func union(_ other: SetBag) -> SetBag {
        SetBag(store.union(other.store))
    }

    func intersection(_ other: SetBag) -> SetBag {
        var setBag = SetBag()
        setBag.store = store.intersection(other.store)
        return setBag
    }

    func symmetricDifference(_ other: SetBag) -> SetBag {
        var setBag = SetBag()
        setBag.store = store.symmetricDifference(other.store)
        return setBag
    }

    @discardableResult
    mutating func insert(_ newMember: Element) -> (inserted: Bool, memberAfterInsert: Element) {
        store.insert(newMember)
    }

    mutating func remove(_ member: Element) -> Element? {
        store.remove(member)
    }

    mutating func update(with newMember: Element) -> Element? {
        store.update(with: newMember)
    }

    mutating func formUnion(_ other: SetBag) {
        store.formUnion(other.store)
    }

    mutating func formSymmetricDifference(_ other: SetBag) {
        store.formSymmetricDifference(other.store)
    }

    mutating func formIntersection(_ other: SetBag) {
        store.formIntersection(other.store)
    }
}

extension SetBag: Defaults.SetAlgebraSerializable {
    func toArray() -> [Element] {
        Array(store)
    }
}

@Suite("README examples", .serialized)
struct ReadmeExampleTests {
    @Test func quickStart() {
        defer { Defaults.reset(.quality) }
        #expect(Defaults[.quality] == 0.8)
        Defaults[.quality] = 0.5
        #expect(Defaults[.quality] == 0.5)
        Defaults[.quality] += 0.1
        #expect(Defaults[.quality] == 0.6)
    }

    @Test func optionalKey() {
        defer { Defaults.reset(.readmeName) }
        #expect(Defaults[.readmeName] == nil)
        Defaults[.readmeName] = 2
        if let name = Defaults[.readmeName] {
            #expect(name == 2)
        }
    }

    @Test func enumExample() {
        #expect(Defaults[.defaultDuration].rawValue == "1 Hour")
    }

    @Test func codableExample() {
        #expect(Defaults[.user].name == "Hello")
    }

    @Test func useKeysDirectly() {
        let isUnicorn = Defaults.Key<Bool>("isUnicorn", default: true)
        #expect(Defaults[isUnicorn])
    }

    @Test func resetKeys() {
        Defaults[.isUnicornMode] = false
        #expect(!Defaults[.isUnicornMode])
        Defaults.reset(.isUnicornMode)
        #expect(Defaults[.isUnicornMode])
    }

    @Test func defaultsAreRegisteredWithTheStandardSuite() {
        #expect(Defaults.standardSuite.object(forKey: Defaults.Keys.isUnicornMode.name) as? Bool == true)
    }

    @Test func customBridge() {
        #expect(Defaults[.bridgedUser].name == "Hello")
        #expect(Defaults[.arrayUser][0].name == "Hello")
        #expect(Defaults[.setUser].first?.name == "Hello")
        #expect(Defaults[.dictionaryUser]["user"]?.name == "Hello")
        Defaults[.bridgedUser] = BridgedUser(name: "Goodbye", age: "25")
        defer { Defaults.reset(.bridgedUser) }
        #expect(
            Defaults.standardSuite.object(forKey: "bridgedUser") as? [String: String] == [
                "name": "Goodbye", "age": "25",
            ])
        #expect(Defaults[.bridgedUser].age == "25")
    }

    @Test func anySerializablePrimitive() {
        let any = Defaults.Key<Defaults.AnySerializable>("anyKey", default: 1)
        defer { any.reset() }
        #expect(Defaults[any].get() == 1)
        Defaults[any] = "🦄"
        #expect(Defaults[any].get(String.self) == "🦄")
    }

    @Test func anySerializableGetAndSet() {
        let any = Defaults.Key<Defaults.AnySerializable>("anyKey", default: [Defaults.AnySerializable(mime.JSON)])
        defer { any.reset() }
        if let mimeType: mime = Defaults[any].get() {
            Issue.record("An array is not a mime: \(mimeType)")
        }
        let first: [mime]? = Defaults[any].get()
        #expect(first == [.JSON])
        Defaults[any].set(mime.STREAM)
        if let mimeType: mime = Defaults[any].get() {
            #expect(mimeType.rawValue == "application/octet-stream")
        } else {
            Issue.record("expected a mime")
        }
    }

    @Test func anySerializableInDictionary() {
        defer { Defaults.reset(.magic) }
        Defaults[.magic]["unicorn"] = "🦄"
        if let value: String = Defaults[.magic]["unicorn"]?.get() {
            #expect(value == "🦄")
        } else {
            Issue.record("expected a string")
        }
        Defaults[.magic]["number"] = 3
        Defaults[.magic]["boolean"] = true
        Defaults[.magic]["enum"] = Defaults.AnySerializable(mime.JSON)
        if let mimeType: mime = Defaults[.magic]["enum"]?.get() {
            #expect(mimeType.rawValue == "application/json")
        } else {
            Issue.record("expected a mime")
        }
        #expect(Defaults[.magic]["number"]?.get(Int.self) == 3)
        #expect(Defaults[.magic]["boolean"]?.get(Bool.self) == true)
        #expect(Defaults[.magic]["number"] == 3)
        #expect(Defaults[.magic]["nothing"] == nil)
    }

    @Test func anySerializableLiterals() {
        let values: [Defaults.AnySerializable] = [1, 2.5, "s", true, nil, [1, 2], ["a": 1]]
        let key = Defaults.Key<[Defaults.AnySerializable]>("literals", default: [], suite: InMemorySuite())
        Defaults[key] = values.filter { $0 != nil }
        #expect(Defaults[key].count == 6)
        #expect(Defaults[key][4].get([Int].self) == [1, 2])
        #expect(Defaults[key][5].get([String: Int].self) == ["a": 1])
    }

    @Test func preferRawRepresentable() {
        let suite = InMemorySuite()
        let preferred = Defaults.Key<PreferredMime>("preferred", default: .JSON, suite: suite)
        let coded = Defaults.Key<CodedMime>("coded", default: .JSON, suite: suite)
        Defaults[preferred] = .JSON
        Defaults[coded] = .JSON
        #expect(suite.object(forKey: "preferred") as? String == "application/json")
        #expect(suite.object(forKey: "coded") as? String == "\"application/json\"")
        #expect(Defaults[coded] == .JSON)
    }

    @Test func preferPropertyListStoresNativeFields() throws {
        let suite = InMemorySuite()
        let window = Defaults.Key<WindowState>(
            "window", default: WindowState(width: 1, height: 1, tabs: []), suite: suite)
        Defaults[window] = WindowState(width: 1024, height: 768, tabs: ["home", "search"])
        let stored = try #require(suite.object(forKey: "window") as? [String: Any])
        #expect(stored["width"] as? Int == 1024)
        #expect(stored["tabs"] as? [String] == ["home", "search"])
        #expect(Defaults[window] == WindowState(width: 1024, height: 768, tabs: ["home", "search"]))
        #expect(Defaults[.window].width == 800)
    }

    @Test func customCollection() {
        #expect(Defaults[.stringBag][0] == "Hello")
        #expect(Defaults[.stringBag][1] == "World!")
    }

    @Test func customSetAlgebra() {
        #expect(Defaults[.stringSet].contains("Hello"))
        #expect(Defaults[.stringSet].contains("World!"))
    }

    @Test func sharedSuite() throws {
        let name = "com.unicorn.app.tests-\(UUID().uuidString)"
        TemporarySuites.remember(name)
        let extensionDefaults = try #require(UserDefaults(suiteName: name))
        let isUnicorn = Defaults.Key<Bool>("isUnicorn", default: true, suite: extensionDefaults)
        #expect(Defaults[isUnicorn])
        #expect(extensionDefaults[isUnicorn])
    }

    @Test func dynamicDefault() {
        #expect(Defaults[.sessionID] != Defaults[.sessionID])
    }

    @Test func inMemorySuite() {
        let testSuite = InMemorySuite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: testSuite)
        Defaults[volume] = 7
        #expect(testSuite[volume] == 7)
    }

    @Test func registeredDefaultSeenThroughTheSuite() {
        #expect(Defaults.standardSuite.object(forKey: Defaults.Keys.quality.name) as? Double == 0.8)
        #expect(UserDefaults.standard[.quality] == 0.8)
    }

    @Test func fileSuite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = FileSuite(name: "com.example.app", directory: directory)
        let volume = Defaults.Key<Int>("volume", default: 5, suite: settings)
        Defaults[volume] = 7
        try settings.flush()
        try Defaults.flushAll()
        #expect(FileSuite(name: "com.example.app", directory: directory)[volume] == 7)
        #expect(settings.problems.isEmpty)
    }
}
