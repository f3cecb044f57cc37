import DefaultsPropertyList

/// The domains a read of a suite searches, in order: values enforced by the administrator
/// (managed), launch arguments, persistent values (the user's), the administrator's or vendor's
/// defaults, registered defaults (declared in code). Suites keep one behind their lock; each
/// mutation reports the keys whose resolved value changed, which is what observers are told.
///
/// Every change to a domain, whatever the path that makes it, advances ``generation``, which the
/// suite exposes as ``DefaultsSuite/valueGeneration`` for keys' read caches.
struct SuiteDomains: Sendable {
    var managed: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    /// A `nil` value is an override to "no value" (``ArgumentsDomain/absentMarker``).
    var arguments: [String: PropertyListValue?] = [:] {
        didSet { generation.advance() }
    }
    var persistent: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    var vendor: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    var registered: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    /// Shared with the suite, which reads it without taking its lock.
    let generation: SuiteGeneration

    init(
        managed: [String: PropertyListValue] = [:],
        arguments: [String: PropertyListValue?] = [:],
        persistent: [String: PropertyListValue] = [:],
        vendor: [String: PropertyListValue] = [:],
        registered: [String: PropertyListValue] = [:],
        generation: SuiteGeneration = SuiteGeneration()
    ) {
        self.managed = managed
        self.arguments = arguments
        self.persistent = persistent
        self.vendor = vendor
        self.registered = registered
        self.generation = generation
    }

    /// The stored domains, highest precedence first: managed, persistent (the user's), vendor.
    /// Launch arguments and registered defaults are the program's own, not stored values.
    var storedLayers: [[String: PropertyListValue]] {
        [managed, persistent, vendor].filter { !$0.isEmpty }
    }

    /// The domain a read of a key is answered from.
    enum Source: Hashable {
        case managed, argument, persistent, vendor, registered
    }

    func value(forKey key: String) -> PropertyListValue? {
        // Managed values and launch arguments are rare: skip their lookups on the hot path when
        // there are none.
        if !managed.isEmpty, let value = managed[key] {
            return value
        }
        if !arguments.isEmpty, let argument = arguments[key] {
            // An override to "no value" hides the persistent value, not the defaults below it.
            return argument ?? defaultValue(forKey: key)
        }
        return persistent[key] ?? defaultValue(forKey: key)
    }

    /// The domain that answers a read of `key`, or `nil` when none has a value.
    func source(forKey key: String) -> Source? {
        if managed[key] != nil { return .managed }
        if let argument = arguments[key], argument != nil { return .argument }
        if arguments[key] == nil, persistent[key] != nil { return .persistent }
        if vendor[key] != nil { return .vendor }
        return registered[key] != nil ? .registered : nil
    }

    /// The value below the user's: the vendor's, else the one declared in code.
    private func defaultValue(forKey key: String) -> PropertyListValue? {
        if !vendor.isEmpty, let value = vendor[key] {
            return value
        }
        return registered[key]
    }

    /// The one function that changes persistent values for a write, whatever door it came
    /// through: keys the administrator enforces are left out and returned, for the caller to
    /// report; `changed` is told each key whose read value changed (for a key given twice, the
    /// last value wins). `tellsChanges: false` skips comparing, when nobody listens.
    mutating func write<Values: Collection<(key: String, value: PropertyListValue?)>>(
        _ values: Values, tellsChanges: Bool = true, changed: (String) -> Void = { _ in }
    ) -> [String] {
        // One key, the common case: no table of old values.
        if values.count == 1, let (key, value) = values.first {
            if !managed.isEmpty, managed[key] != nil {
                return [key]
            }
            let old = tellsChanges ? self.value(forKey: key) : nil
            persistent[key] = value
            if tellsChanges, old != self.value(forKey: key) {
                changed(key)
            }
            return []
        }
        var refused: [String] = []
        var old: [String: PropertyListValue?] = [:]
        for (key, _) in values where old.index(forKey: key) == nil {
            if !managed.isEmpty, managed[key] != nil {
                if !refused.contains(key) {
                    refused.append(key)
                }
                continue
            }
            old[key] = .some(value(forKey: key))
        }
        for (key, value) in values where old.index(forKey: key) != nil {
            persistent[key] = value
        }
        if tellsChanges {
            for (key, value) in old where value != self.value(forKey: key) {
                changed(key)
            }
        }
        return refused
    }

    /// Replaces all persistent values (a reload or `removeAll`); returns the keys whose resolved
    /// value changed.
    mutating func replacePersistent(with values: [String: PropertyListValue]) -> Set<String> {
        let old = self
        persistent = values
        return changedKeys(since: old, among: Set(old.persistent.keys).union(values.keys))
    }

    /// Replaces the administrator's domains (after their files changed); returns the keys whose
    /// resolved value changed.
    mutating func replaceAdministrator(
        vendor: [String: PropertyListValue], managed: [String: PropertyListValue]
    ) -> Set<String> {
        let old = self
        self.vendor = vendor
        self.managed = managed
        let keys = Set(old.vendor.keys).union(old.managed.keys).union(vendor.keys).union(managed.keys)
        return changedKeys(since: old, among: keys)
    }

    /// Adds registered defaults; returns the keys whose resolved value changed.
    mutating func register(_ defaults: [String: PropertyListValue]) -> Set<String> {
        let old = self
        registered.merge(defaults) { _, new in new }
        return changedKeys(since: old, among: Set(defaults.keys))
    }

    private func changedKeys(since old: SuiteDomains, among keys: Set<String>) -> Set<String> {
        keys.filter { old.value(forKey: $0) != value(forKey: $0) }
    }
}
