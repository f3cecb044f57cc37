import Defaults
import DefaultsPropertyList
import Foundation
import Synchronization
import TestSupport
import Testing

/// Every door a write comes through, over every kind of suite: the same rules, the same reports.
/// A value with no property-list form is one `DefaultsError` of kind `unsupportedValue` and
/// changes nothing (not the other values written with it); a key the administrator enforces is
/// one `DefaultsError` of kind `managedKey`; a value that changes posts one change event; an
/// observer or a problem handler that flushes, reloads and writes does not stop the write.
@Suite(.timeLimit(.minutes(1)), .mayBlock)
struct WriteDoorsTests {
    /// A type whose bridge can refuse: `isStorable: false` has no stored form.
    struct Note: Hashable, Defaults.Serializable {
        var text: String
        var isStorable = true

        struct Bridge: Defaults.Bridge {
            typealias Value = Note
            typealias Serializable = String
            func serialize(_ value: Note?) -> String? { value.flatMap { $0.isStorable ? $0.text : nil } }
            func deserialize(_ object: String?) -> Note? { object.map { Note(text: $0) } }
        }

        static let bridge = Bridge()
    }

    /// What is not a property-list object.
    struct Unsupported {}

    enum Door: String, CaseIterable, CustomTestStringConvertible {
        case set, setValues, suiteModify, keySubscript, defaultsModify

        var testDescription: String { rawValue }

        /// Writes `text` to `key` (`nil`: a value with no property-list form); `setValues` writes
        /// `companion` in the same edit.
        func write(_ text: String?, to key: String, in suite: any DefaultsSuite, companion: String = "companion") {
            let object: Any = text ?? Unsupported()
            switch self {
            case .set:
                suite.set(object, forKey: key)
            case .setValues:
                suite.setValues([(key, object), (companion, "written with \(key)")])
            case .suiteModify:
                suite.modify(forKey: key) { $0 = object }
            case .keySubscript:
                let typed = Defaults.Key<Note?>(key, suite: suite)
                Defaults[typed] = Note(text: text ?? "", isStorable: text != nil)
            case .defaultsModify:
                let typed = Defaults.Key<Note?>(key, suite: suite)
                Defaults.modify(typed) { $0 = Note(text: text ?? "", isStorable: text != nil) }
            }
        }
    }

    /// What was reported and posted.
    final class Log: Sendable {
        let problems = Mutex<[DefaultsError]>([])
        let events = Mutex<[Set<String>]>([])
    }

    /// A suite, with its reported problems and the keys of each change event posted.
    final class Watched: Sendable {
        let suite: any DefaultsSuite
        private let log = Log()
        private let token: SuiteChangeCenter.Token

        init(_ suite: any DefaultsSuite) {
            self.suite = suite
            let log = log
            token = suite.changes.addObserver { change in log.events.withLock { $0.append(change.keys) } }
            WriteDoorsTests.setProblemHandler(of: suite) { problem in log.problems.withLock { $0.append(problem) } }
        }

        deinit { suite.changes.removeObserver(token) }

        var reported: [DefaultsError] { log.problems.withLock { $0 } }
        func events(of key: String) -> Int { log.events.withLock { $0.filter { $0.contains(key) }.count } }
    }

    static func setProblemHandler(of suite: any DefaultsSuite, _ handler: @escaping @Sendable (DefaultsError) -> Void) {
        switch suite {
        case let suite as FileSuite: suite.onProblem = handler
        case let suite as InMemorySuite: suite.onProblem = handler
        case let suite as UserDefaultsSuite: suite.onProblem = handler
        default: Issue.record("a suite of an unknown type")
        }
    }

    @Test(arguments: SuiteKind.withFileSuite, Door.allCases)
    func aValueWithNoPropertyListFormIsOneProblemAndChangesNothing(kind: SuiteKind, door: Door) throws {
        let watched = Watched(kind.make())
        let key = "value-\(UUID().uuidString)"
        door.write(nil, to: key, in: watched.suite)

        #expect(watched.reported.count == 1, "\(watched.reported.map(\.message))")
        #expect(watched.reported.first?.kind == .unsupportedValue)
        #expect(watched.reported.first?.key == key)
        #expect(watched.suite.object(forKey: key) == nil)
        #expect(watched.suite.object(forKey: "companion") == nil, "the edit is refused whole")
        #expect(watched.events(of: key) == 0 && watched.events(of: "companion") == 0)
        try watched.suite.flush()
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func registeringADefaultWithNoPropertyListFormIsOneProblem(kind: SuiteKind) throws {
        let watched = Watched(kind.make())
        let key = "default-\(UUID().uuidString)"
        watched.suite.register(defaults: [key: Unsupported(), "\(key)-fine": 1])
        #expect(watched.reported.map(\.kind) == [.unsupportedValue], "\(watched.reported.map(\.message))")
        #expect(watched.reported.first?.message.contains("not registered") == true)
        #expect(watched.suite.object(forKey: key) == nil)
        #expect(watched.suite.object(forKey: "\(key)-fine") as? Int == 1, "the other defaults are registered")
    }

    struct Transaction: Defaults.SnapshotSchema {
        var note = Defaults.Key<Note?>("write-doors-note")
        var companion = Defaults.Key<String?>("write-doors-companion")
    }

    /// A snapshot transaction is one edit: one with a value that cannot be serialized throws and
    /// stores nothing; one that writes a managed key reports it once and stores the rest.
    @Test(arguments: SuiteKind.withFileSuite)
    func aTransactionIsAppliedWholeOrNotAtAll(kind: SuiteKind) throws {
        let watched = Watched(kind.make())
        let store = Defaults.SnapshotStore(Transaction(), suite: watched.suite)
        #expect(throws: DefaultsError.self) {
            try store.write { draft in
                draft.note = Note(text: "", isStorable: false)
                draft.companion = "with it"
            }
        }
        #expect(watched.suite.object(forKey: "write-doors-companion") == nil)
        #expect(watched.events(of: "write-doors-companion") == 0)

        try store.write { draft in
            draft.note = Note(text: "stored")
            draft.companion = "with it"
        }
        #expect(watched.suite.object(forKey: "write-doors-note") as? String == "stored")
        #expect(watched.events(of: "write-doors-note") == 1 && watched.events(of: "write-doors-companion") == 1)
    }

    @Test func aTransactionWritingAManagedKeyReportsItOnceAndStoresTheRest() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["write-doors-note": "enforced"], to: sandbox.managedURL(in: sandbox.first))
        let watched = Watched(sandbox.suite())
        try Defaults.SnapshotStore(Transaction(), suite: watched.suite).write { draft in
            draft.note = Note(text: "mine")
            draft.companion = "with it"
        }
        #expect(watched.reported.map(\.kind) == [.managedKey])
        #expect(watched.suite.object(forKey: "write-doors-note") as? String == "enforced")
        #expect(watched.suite.object(forKey: "write-doors-companion") as? String == "with it")
    }

    @Test(arguments: SuiteKind.withFileSuite, Door.allCases)
    func aWriteThatChangesAValuePostsOneEvent(kind: SuiteKind, door: Door) throws {
        let watched = Watched(kind.make())
        let key = "value-\(UUID().uuidString)"
        door.write("first", to: key, in: watched.suite)
        #expect(watched.suite.object(forKey: key) as? String == "first")
        #expect(watched.events(of: key) == 1)
        door.write("first", to: key, in: watched.suite)
        #expect(watched.events(of: key) == 1, "writing the same value again changes nothing")
        #expect(watched.reported.isEmpty, "\(watched.reported.map(\.message))")
        try watched.suite.flush()
    }

    @Test(arguments: Door.allCases)
    func aManagedKeyIsOneProblemAndKeepsTheEnforcedValue(door: Door) throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["locked": "enforced"], to: sandbox.managedURL(in: sandbox.first))
        let watched = Watched(sandbox.suite())
        door.write("mine", to: "locked", in: watched.suite, companion: "free")

        #expect(watched.reported.map(\.kind) == [.managedKey], "\(watched.reported.map(\.message))")
        #expect(watched.suite.object(forKey: "locked") as? String == "enforced")
        #expect(watched.events(of: "locked") == 0)
        if door == .setValues {
            #expect(watched.suite.object(forKey: "free") as? String == "written with locked", "the others are written")
        }
        try watched.suite.flush()
        let file = sandbox.user.fileURL(sandbox.name)
        if let data = FileManager.default.contents(atPath: file.path) {
            let stored = try PropertyList.decode(data) as? [String: Any]
            #expect(stored?["locked"] == nil, "never written into the user's file")
        }
    }

    @Test func resettingAManagedKeyIsOneProblem() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["locked": "enforced"], to: sandbox.managedURL(in: sandbox.first))
        let watched = Watched(sandbox.suite())
        Defaults.reset(["locked"], suite: watched.suite)
        #expect(watched.reported.map(\.kind) == [.managedKey])
        #expect(watched.suite.object(forKey: "locked") as? String == "enforced")
    }

    /// `removeAll` is one edit: one event with every key whose read value changed, none for the
    /// keys a registered default, a launch argument or the administrator answers as before.
    @Test(arguments: SuiteKind.withFileSuite)
    func removeAllPostsOneEventWithEveryChangedKey(kind: SuiteKind) throws {
        let watched = Watched(kind.make())
        let id = UUID().uuidString
        watched.suite.register(defaults: ["registered-\(id)": "default"])
        watched.suite.setValues([("a-\(id)", 1), ("b-\(id)", 2), ("registered-\(id)", "default")])
        let registeredEvents = watched.events(of: "registered-\(id)")
        watched.suite.removeAll()
        #expect(watched.events(of: "a-\(id)") == 2 && watched.events(of: "b-\(id)") == 2, "one to write, one to remove")
        #expect(watched.events(of: "registered-\(id)") == registeredEvents, "it reads its default before and after")
        #expect(watched.suite.object(forKey: "a-\(id)") == nil)
        #expect(watched.suite.persistentValues().isEmpty)
        #expect(watched.reported.isEmpty, "\(watched.reported.map(\.message))")
        try watched.suite.flush()
    }

    @Test func removeAllKeepsWhatTheAdministratorEnforces() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["locked": "enforced"], to: sandbox.managedURL(in: sandbox.first))
        let watched = Watched(sandbox.suite())
        watched.suite.set("mine", forKey: "free")
        watched.suite.removeAll()
        #expect(watched.suite.object(forKey: "locked") as? String == "enforced")
        #expect(watched.suite.object(forKey: "free") == nil)
        #expect(watched.events(of: "locked") == 0 && watched.events(of: "free") == 2)
        #expect(watched.reported.isEmpty, "removing is not writing the managed key")
        try watched.suite.flush()
        #expect(try sandbox.user.storedValues(sandbox.name).isEmpty)
    }

    /// A key a launch argument sets reads the argument through every door: the write is stored
    /// (the next launch without the argument reads it) and posts nothing, as the read value did not
    /// change; `removeAll` leaves the argument too.
    @Test(arguments: [SuiteKind.inMemory, .fileSuite], Door.allCases)
    func aKeyALaunchArgumentSetsKeepsReadingTheArgument(kind: SuiteKind, door: Door) throws {
        let arguments = ["-argued", "from the arguments"]
        let suite: any DefaultsSuite =
            kind == .inMemory
            ? InMemorySuite(arguments: arguments)
            : FileSuite(
                name: "argued-\(UUID().uuidString)", directory: TemporarySuites.makeDirectory(), arguments: arguments)
        let watched = Watched(suite)
        door.write("mine", to: "argued", in: suite)
        #expect(suite.object(forKey: "argued") as? String == "from the arguments")
        #expect(suite.persistentValues()["argued"] as? String == "mine")
        #expect(watched.events(of: "argued") == 0)
        #expect(watched.reported.isEmpty, "\(watched.reported.map(\.message))")
        suite.removeAll()
        #expect(suite.object(forKey: "argued") as? String == "from the arguments")
        #expect(watched.events(of: "argued") == 0)
        try suite.flush()
    }

    /// An observer that flushes, reloads and writes another key, and a problem handler that
    /// does the same, from inside the write that calls them.
    @Test(arguments: SuiteKind.withFileSuite, Door.allCases)
    func handlersThatFlushReloadAndWriteDoNotStopTheWrite(kind: SuiteKind, door: Door) throws {
        let suite = kind.make()
        let key = "value-\(UUID().uuidString)"
        let token = suite.changes.addObserver(forKeys: [key]) { _ in
            try? suite.flush()
            (suite as? FileSuite)?.reload()
            suite.set("from the observer", forKey: "observer-wrote")
        }
        defer { suite.changes.removeObserver(token) }
        Self.setProblemHandler(of: suite) { _ in
            try? suite.flush()
            (suite as? FileSuite)?.reload()
            suite.set("from the handler", forKey: "handler-wrote")
        }

        door.write("changed", to: key, in: suite)
        door.write(nil, to: key, in: suite)

        #expect(suite.object(forKey: "observer-wrote") as? String == "from the observer")
        #expect(suite.object(forKey: "handler-wrote") as? String == "from the handler")
        try suite.flush()
    }
}
