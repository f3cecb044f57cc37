import DefaultsPropertyList

/// The domains a read of a suite searches, in order: values enforced by the administrator
/// (managed), launch arguments, persistent values (the user's), the administrator's or vendor's
/// defaults, registered defaults (declared in code). A ``SuiteStore`` keeps them behind its lock
/// and changes them only through ``apply(_:tellsChanges:)``, which reports the keys whose
/// resolved value changed: what observers are told.
///
/// Every change to a domain, whatever the path that makes it, advances ``generation``, which the
/// suite exposes as ``DefaultsSuite/valueGeneration`` for keys' read caches.
package struct SuiteDomains: Sendable {
    private(set) var managed: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    /// A `nil` value is an override to "no value" (``ArgumentsDomain/absentMarker``).
    private(set) var arguments: [String: PropertyListValue?] = [:] {
        didSet { generation.advance() }
    }
    package private(set) var persistent: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    private(set) var vendor: [String: PropertyListValue] = [:] {
        didSet { generation.advance() }
    }
    private(set) var registered: [String: PropertyListValue] = [:] {
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

    /// Every key a read finds a value for, with that value.
    var resolved: [String: PropertyListValue] {
        var keys = Set(managed.keys).union(persistent.keys).union(vendor.keys).union(registered.keys)
        keys.formUnion(arguments.keys)
        var values: [String: PropertyListValue] = [:]
        for key in keys {
            values[key] = value(forKey: key)
        }
        return values
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

    /// The one function that changes the domains, for every kind of edit; returns the keys
    /// whose read value changed and the keys the administrator's rule refused. `tellsChanges:
    /// false` skips comparing, when nobody listens; `managedKeys` chooses what a write of a key
    /// the administrator enforces does to the rest of its edit. Called by ``SuiteStore/apply(_:)``,
    /// under the suite's lock, and on domains loaded without a suite for the `defaults` command
    /// (``AdministratorResolution/applying(_:to:managedKeys:)``).
    mutating func apply(
        _ edit: SuiteEdit, tellsChanges: Bool = true, managedKeys: SuiteEdit.ManagedKeys = .skip
    ) -> SuiteEdit.Outcome {
        var outcome = SuiteEdit.Outcome(origin: edit.origin)
        switch edit {
        case .set(let key, let value):
            // One key, the common case: no table of old values.
            if !managed.isEmpty, managed[key] != nil {
                outcome.managed = [key]
                return outcome
            }
            let old = tellsChanges ? self.value(forKey: key) : nil
            persistent[key] = value
            outcome.isPersistable = true
            if tellsChanges, old != self.value(forKey: key) {
                outcome.changed = [key]
            }
        case .setValues(let values):
            if !managed.isEmpty {
                for (key, _) in values where managed[key] != nil && !outcome.managed.contains(key) {
                    outcome.managed.append(key)
                }
                if managedKeys == .refuseWholeEdit, !outcome.managed.isEmpty {
                    return outcome
                }
            }
            var old: [String: PropertyListValue?] = [:]
            for (key, _) in values where old.index(forKey: key) == nil && (managed.isEmpty || managed[key] == nil) {
                old[key] = .some(value(forKey: key))
            }
            for (key, value) in values where old.index(forKey: key) != nil {
                persistent[key] = value
            }
            outcome.isPersistable = !old.isEmpty
            if tellsChanges {
                outcome.changed = Set(old.compactMap { key, value in value != self.value(forKey: key) ? key : nil })
            }
        case .removeAll:
            outcome.changed = replace { $0.persistent = [:] }
            outcome.isPersistable = true
        case .load(let values):
            outcome.changed = replace { $0.persistent = values }
        case .register(let defaults):
            outcome.changed = replace(among: Set(defaults.keys)) { $0.registered.merge(defaults) { _, new in new } }
        case .administrator(let vendor, let managed):
            // A key that becomes managed, or stops being, changes whether it can be written even
            // when its value stays: its observers are told too (see `Defaults.writability(of:)`).
            let writabilityChanged = Set(self.managed.keys).symmetricDifference(managed.keys)
            outcome.changed = replace { domains in
                domains.vendor = vendor
                domains.managed = managed
            }
            outcome.changed.formUnion(writabilityChanged)
        case .conditional(let writes, _), .putBack(let writes):
            // One at a time: a second write of a key expects what the first stored. The managed
            // rule does not apply: it refuses what this user writes here, while a value from
            // another machine (or the file's own) is stored beneath what is enforced here.
            var old: [String: PropertyListValue?] = [:]
            for write in writes where persistent[write.key] == write.expected {
                if old.index(forKey: write.key) == nil {
                    old[write.key] = .some(value(forKey: write.key))
                }
                outcome.stored.insert(write.key)
                persistent[write.key] = write.value
            }
            outcome.isPersistable = !outcome.stored.isEmpty
            outcome.changed = Set(old.keys.filter { (old[$0] ?? nil) != value(forKey: $0) })
        case .migrated(let moves):
            var old: [String: PropertyListValue?] = [:]
            for move in moves
            where persistent[move.from] == move.expected && (move.from == move.to || persistent[move.to] == nil) {
                for key in [move.from, move.to] where old.index(forKey: key) == nil {
                    old[key] = .some(value(forKey: key))
                }
                persistent[move.from] = nil
                persistent[move.to] = move.value
                outcome.stored.insert(move.to)
                outcome.moves.append(move)
            }
            outcome.isPersistable = !outcome.stored.isEmpty
            outcome.changed = Set(old.keys.filter { (old[$0] ?? nil) != value(forKey: $0) })
        }
        return outcome
    }

    /// Makes `change` and returns the keys whose resolved value changed, among `keys` (by
    /// default every key of the domains `change` may touch, before and after).
    private mutating func replace(
        among keys: Set<String>? = nil, _ change: (inout SuiteDomains) -> Void
    ) -> Set<String> {
        let old = self
        change(&self)
        let keys =
            keys
            ?? Set(old.persistent.keys).union(persistent.keys).union(old.vendor.keys).union(vendor.keys)
            .union(old.managed.keys).union(managed.keys)
        return changedKeys(since: old, among: keys)
    }

    private func changedKeys(since old: SuiteDomains, among keys: Set<String>) -> Set<String> {
        keys.filter { old.value(forKey: $0) != value(forKey: $0) }
    }
}
