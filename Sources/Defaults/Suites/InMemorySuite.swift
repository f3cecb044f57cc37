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
public final class InMemorySuite: DefaultsSuite, PropertyListValueSuite, SyncedWriteSuite {
    public let name: String
    public let changes = SuiteChangeCenter()
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

    /// Stores `object`; one that is not a property-list value is not stored, and a warning is logged.
    public func set(_ object: Any?, forKey key: String) {
        guard let value = storable(object, forKey: key) else { return }
        if domains.withLock({ $0.setPersistent(value, forKey: key) }) {
            changes.post(SuiteChange(keys: [key]))
        }
    }

    /// Applies every change under one lock and posts one change event.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        let values = changes.compactMap { change in
            storable(change.object, forKey: change.key).map { (key: change.key, value: $0) }
        }
        self.changes.post(SuiteChange(keys: domains.withLock { $0.setPersistent(values) }))
    }

    func applySynced(_ writes: [SyncedWrite]) -> Set<String> {
        let applied = domains.withLock { $0.applySynced(writes) }
        changes.post(SuiteChange(keys: applied.changed, origin: .sync))
        return Set(applied.stored.map(\.key))
    }

    /// `.some(nil)` to remove, `.some(value)` to store, `nil` for an object that cannot be stored.
    private func storable(_ object: Any?, forKey key: String) -> PropertyListValue?? {
        guard let object else { return .some(nil) }
        // Not `return propertyListValue(…)`: its `nil` would become `.some(nil)`, a removal.
        guard let value = propertyListValue(object, forKey: key, unless: "stored") else { return nil }
        return .some(value)
    }

    /// `object` as a property-list value, or `nil` after logging that the value for `key` was not
    /// `stored` or `registered`.
    private func propertyListValue(_ object: Any, forKey key: String, unless action: String) -> PropertyListValue? {
        do {
            return try PropertyListValue(object)
        } catch {
            Defaults.logger.warning("The value for key \"\(key)\" in suite \"\(name)\" was not \(action): \(error)")
            return nil
        }
    }

    public func removeAll() {
        changes.post(SuiteChange(keys: domains.withLock { $0.replacePersistent(with: [:]) }))
    }

    public func register(defaults: [String: Any]) {
        var values: [String: PropertyListValue] = [:]
        for (key, object) in defaults {
            values[key] = propertyListValue(object, forKey: key, unless: "registered")
        }
        changes.post(SuiteChange(keys: domains.withLock { $0.register(values) }))
    }

    public func persistentValues() -> [String: Any] {
        domains.withLock { $0.persistent }.mapValues(\.object)
    }

    public var valueGeneration: UInt64? { generation.value }

    /// Nothing to do: the values are never stored anywhere else.
    public func flush() throws {}
}
