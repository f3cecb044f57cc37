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
public final class InMemorySuite: DefaultsSuite, StoreBackedSuite {
    public let name: String
    /// Its values: an in-memory suite is a store with no backend.
    package let store: SuiteStore

    public var changes: SuiteChangeCenter { store.changes }

    /// Creates a suite holding `values`, with optional launch-argument overrides
    /// (`["-key", "value", …]`, values in property-list syntax). A value that is not a
    /// property-list object is not stored, and is reported as ``set(_:forKey:)`` reports it
    /// (``problems``, ``Defaults/logger``); the others are stored.
    public init(name: String = "in-memory-\(UUID().uuidString)", values: [String: Any] = [:], arguments: [String] = [])
    {
        self.name = name
        var persistent: [String: PropertyListValue] = [:]
        var unsupported: [DefaultsError] = []
        for (key, object) in values {
            switch SuiteWrite.convert(object, forKey: key, suite: name) {
            case .success(let value): persistent[key] = value
            case .failure(let problem): unsupported.append(problem)
            }
        }
        store = SuiteStore(
            name: name, domains: SuiteDomains(arguments: ArgumentsDomain.parse(arguments), persistent: persistent),
            keepsPending: false)
        store.changes.belongs(to: self)
        for problem in unsupported.sorted(by: { ($0.key ?? "") < ($1.key ?? "") }) {
            report(problem)
        }
    }

    public func object(forKey key: String) -> Any? {
        store.value(forKey: key)?.object
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

    package func persist(_ outcome: SuiteEdit.Outcome) {}

    /// Problems met since the suite was made, oldest first (at most the last 100): values that
    /// could not be stored or registered.
    public var problems: [DefaultsError] { store.problems.all }

    /// Called with each problem as it happens, on the thread that met it, with no lock held.
    public var onProblem: (@Sendable (DefaultsError) -> Void)? {
        get { store.problems.onProblem }
        set { store.problems.onProblem = newValue }
    }

    public func removeAll() {
        edit(.removeAll)
    }

    public func register(defaults: [String: Any]) {
        edit(.register(registrable(defaults)))
    }

    public func persistentValues() -> [String: Any] {
        store.persistent.mapValues(\.object)
    }

    public var valueGeneration: UInt64? { store.generation.value }

    /// Nothing to do: the values are never stored anywhere else.
    public func flush() throws {}
}
