import DefaultsPropertyList
import Foundation
import Synchronization

/// A suite whose values live only in memory: for tests, previews, and settings that must not
/// outlive the process.
///
/// ```swift
/// let suite = InMemorySuite()
/// let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
/// Defaults[volume] = 7
/// ```
public final class InMemorySuite: DefaultsSuite, PropertyListValueSuite, SyncedWriteSuite, EditableSuite {
    public let name: String
    public let changes = SuiteChangeCenter()
    private let problemLog = SuiteProblems()
    private let domains: Mutex<SuiteDomains>
    private let generation = SuiteGeneration()

    /// Creates a suite holding `values`, with optional launch-argument overrides
    /// (`["-key", "value", …]`, values in property-list syntax).
    public init(name: String = "in-memory-\(UUID().uuidString)", values: [String: Any] = [:], arguments: [String] = [])
    {
        self.name = name
        let values = values.compactMapValues(PropertyListValue.from)
        domains = Mutex(
            SuiteDomains(arguments: ArgumentsDomain.parse(arguments), persistent: values, generation: generation))
    }

    public func object(forKey key: String) -> Any? {
        domains.withLock { $0.value(forKey: key) }?.object
    }

    func propertyListValue(forKey key: String) -> PropertyListValue? {
        domains.withLock { $0.value(forKey: key) }
    }

    func persistentPropertyListValues() -> [String: PropertyListValue] {
        domains.withLock { $0.persistent }
    }

    func storedPropertyListLayers() -> [[String: PropertyListValue]] {
        domains.withLock { $0.storedLayers }
    }

    /// Stores `object`; one that is not a property-list object is not stored, and is reported
    /// (``problems``, ``onProblem``, ``Defaults/logger``).
    public func set(_ object: Any?, forKey key: String) {
        write(object, forKey: key)
    }

    /// Applies every change under one lock and posts one change event. A value that is not a
    /// property-list object is reported, and none of the values is stored.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        write(changes)
    }

    package func apply(_ values: some Collection<(key: String, value: PropertyListValue?)>) {
        var changed = Set<String>()
        _ = domains.withLock { $0.write(values) { changed.insert($0) } }
        if !changed.isEmpty {
            changes.post(SuiteChange(keys: changed))
        }
    }

    func applySynced(_ writes: [SyncedWrite]) -> Set<String> {
        let applied = domains.withLock { $0.applySynced(writes) }
        changes.post(SuiteChange(keys: applied.changed, origin: .sync))
        return Set(applied.stored.map(\.key))
    }

    /// Problems met since the suite was made, oldest first (at most the last 100): values that
    /// could not be stored or registered.
    public var problems: [DefaultsError] { problemLog.all }

    /// Called with each problem as it happens, on the thread that met it, with no lock held.
    public var onProblem: (@Sendable (DefaultsError) -> Void)? {
        get { problemLog.onProblem }
        set { problemLog.onProblem = newValue }
    }

    package func report(_ problem: DefaultsError) {
        problemLog.report(problem)
    }

    public func removeAll() {
        changes.post(SuiteChange(keys: domains.withLock { $0.replacePersistent(with: [:]) }))
    }

    public func register(defaults: [String: Any]) {
        let values = registrable(defaults)
        changes.post(SuiteChange(keys: domains.withLock { $0.register(values) }))
    }

    public func persistentValues() -> [String: Any] {
        domains.withLock { $0.persistent }.mapValues(\.object)
    }

    public var valueGeneration: UInt64? { generation.value }

    /// Nothing to do: the values are never stored anywhere else.
    public func flush() throws {}
}
