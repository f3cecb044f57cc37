/// The domains a read of a suite searches, in order: values enforced by the administrator
/// (managed), launch arguments, persistent values (the user's), the administrator's or vendor's
/// defaults, registered defaults (declared in code). Suites keep one behind their lock; each
/// mutation reports the keys whose resolved value changed, which is what observers are told.
///
/// `@unchecked Sendable`: the dictionaries hold only property-list objects (strings, numbers,
/// dates, data, arrays and dictionaries of these), which are immutable values, and, in the
/// arguments domain, the `Sendable` marker ``ArgumentsDomain/Absent``.
///
/// Every change to a domain, whatever the path that makes it, advances ``generation``, which the
/// suite exposes as ``DefaultsSuite/valueGeneration`` for keys' read caches.
struct SuiteDomains: @unchecked Sendable {
    var managed: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    var arguments: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    var persistent: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    var vendor: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    var registered: [String: Any] = [:] {
        didSet { generation.advance() }
    }
    /// Shared with the suite, which reads it without taking its lock.
    let generation: SuiteGeneration

    init(
        managed: [String: Any] = [:],
        arguments: [String: Any] = [:],
        persistent: [String: Any] = [:],
        vendor: [String: Any] = [:],
        registered: [String: Any] = [:],
        generation: SuiteGeneration = SuiteGeneration()
    ) {
        self.managed = managed
        self.arguments = arguments
        self.persistent = persistent
        self.vendor = vendor
        self.registered = registered
        self.generation = generation
    }

    /// The domain a read of a key is answered from.
    enum Source: Hashable {
        case managed, argument, persistent, vendor, registered
    }

    func object(forKey key: String) -> Any? {
        // Managed values and launch arguments are rare: skip their lookups on the hot path when
        // there are none.
        if !managed.isEmpty, let object = managed[key] {
            return object
        }
        if !arguments.isEmpty, let object = arguments[key] {
            // An override to "no value" hides the persistent value, not the defaults below it.
            return object is ArgumentsDomain.Absent ? defaultValue(forKey: key) : object
        }
        return persistent[key] ?? defaultValue(forKey: key)
    }

    /// The domain that answers a read of `key`, or `nil` when none has a value.
    func source(forKey key: String) -> Source? {
        if managed[key] != nil { return .managed }
        if let object = arguments[key], !(object is ArgumentsDomain.Absent) { return .argument }
        if arguments[key] == nil, persistent[key] != nil { return .persistent }
        if vendor[key] != nil { return .vendor }
        return registered[key] != nil ? .registered : nil
    }

    /// The value below the user's: the vendor's, else the one declared in code.
    private func defaultValue(forKey key: String) -> Any? {
        if !vendor.isEmpty, let object = vendor[key] {
            return object
        }
        return registered[key]
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

    /// Replaces the administrator's domains (after their files changed); returns the keys whose
    /// resolved value changed.
    mutating func replaceAdministrator(vendor: [String: Any], managed: [String: Any]) -> Set<String> {
        let old = self
        self.vendor = vendor
        self.managed = managed
        let keys = Set(old.vendor.keys).union(old.managed.keys).union(vendor.keys).union(managed.keys)
        return changedKeys(since: old, among: keys)
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
