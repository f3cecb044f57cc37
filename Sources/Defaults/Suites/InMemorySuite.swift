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
public final class InMemorySuite: DefaultsSuite {
    public let name: String
    public let changes = SuiteChangeCenter()
    private let domains: Mutex<SuiteDomains>
    private let generation = SuiteGeneration()

    /// Creates a suite holding `values`, with optional launch-argument overrides
    /// (`["-key", "value", …]`, values in property-list syntax).
    public init(name: String = "in-memory-\(UUID().uuidString)", values: [String: Any] = [:], arguments: [String] = [])
    {
        self.name = name
        let values = values.compactMapValues(PropertyListObject.normalized)
        domains = Mutex(
            SuiteDomains(arguments: ArgumentsDomain.parse(arguments), persistent: values, generation: generation))
    }

    public func object(forKey key: String) -> Any? {
        domains.withLock { $0.object(forKey: key) }
    }

    public func set(_ object: Any?, forKey key: String) {
        if domains.withLock({ $0.setPersistent(object, forKey: key) }) {
            changes.post(SuiteChange(keys: [key]))
        }
    }

    /// Applies every change under one lock and posts one change event.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        self.changes.post(SuiteChange(keys: domains.withLock { $0.setPersistent(changes) }))
    }

    public func removeAll() {
        changes.post(SuiteChange(keys: domains.withLock { $0.replacePersistent(with: [:]) }))
    }

    public func register(defaults: [String: Any]) {
        changes.post(SuiteChange(keys: domains.withLock { $0.register(defaults) }))
    }

    public func persistentValues() -> [String: Any] {
        domains.withLock { $0.persistent }
    }

    public var valueGeneration: UInt64? { generation.value }

    /// Nothing to do: the values are never stored anywhere else.
    public func flush() throws {}
}
