/// The domains a read of a suite searches, in order: launch arguments, persistent values,
/// registered defaults. Suites keep one behind their lock; each mutation reports the keys whose
/// resolved value changed, which is what observers are told.
///
/// `@unchecked Sendable`: the dictionaries hold only property-list objects (strings, numbers,
/// dates, data, arrays and dictionaries of these), which are immutable values, and, in the
/// arguments domain, the `Sendable` marker ``ArgumentsDomain/Absent``.
///
/// Every change to a domain, whatever the path that makes it, advances ``generation``, which the
/// suite exposes as ``DefaultsSuite/valueGeneration`` for keys' read caches.
struct SuiteDomains: @unchecked Sendable {
    var arguments: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    var persistent: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    var registered: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    /// Shared with the suite, which reads it without taking its lock.
    let generation: SuiteGeneration

    init(
        arguments: [String: Any] = [:],
        persistent: [String: Any] = [:],
        registered: [String: Any] = [:],
        generation: SuiteGeneration = SuiteGeneration()
    ) {
        self.arguments = arguments
        self.persistent = persistent
        self.registered = registered
        self.generation = generation
    }

    func object(forKey key: String) -> Any? {
        // Launch arguments are rare: skip their lookup on the hot path when there are none.
        if !arguments.isEmpty, let object = arguments[key] {
            // An override to "no value" hides the persistent value, not the registered default.
            return object is ArgumentsDomain.Absent ? registered[key] : object
        }
        return persistent[key] ?? registered[key]
    }

    /// Sets or removes a persistent value; returns whether the resolved value changed.
    mutating func setPersistent(_ object: Any?, forKey key: String) -> Bool {
        let old = self.object(forKey: key)
        persistent[key] = object
        return !PropertyListObject.isEqual(old, self.object(forKey: key))
    }

    /// Sets or removes several persistent values (the last one wins for a key given twice);
    /// returns the keys whose resolved value changed.
    mutating func setPersistent(_ changes: [(key: String, object: Any?)]) -> Set<String> {
        var old: [String: Any?] = [:]
        for change in changes where old.index(forKey: change.key) == nil {
            old[change.key] = .some(object(forKey: change.key))
        }
        for change in changes {
            persistent[change.key] = change.object
        }
        return Set(old.keys.filter { key in !PropertyListObject.isEqual(old[key] ?? nil, object(forKey: key)) })
    }

    /// Replaces all persistent values (a reload or `removeAll`); returns the keys whose resolved
    /// value changed.
    mutating func replacePersistent(with values: [String: Any]) -> Set<String> {
        let old = self
        persistent = values
        return changedKeys(since: old, among: Set(old.persistent.keys).union(values.keys))
    }

    /// Adds registered defaults; returns the keys whose resolved value changed.
    mutating func register(_ defaults: [String: Any]) -> Set<String> {
        let old = self
        registered.merge(defaults) { _, new in new }
        return changedKeys(since: old, among: Set(defaults.keys))
    }

    private func changedKeys(since old: SuiteDomains, among keys: Set<String>) -> Set<String> {
        keys.filter { !PropertyListObject.isEqual(old.object(forKey: $0), object(forKey: $0)) }
    }
}
