/// The distinct keys one observation watches, with where each one's object sits in a snapshot.
struct ObservedKeys: Sendable {
    private struct Identity: Hashable {
        let suite: ObjectIdentifier
        let name: String
    }

    /// The keys, without duplicates, in the order they were given.
    let keys: [Defaults.Keys]
    private let indexes: [Identity: Int]

    init(_ keys: [Defaults.Keys]) {
        var unique: [Defaults.Keys] = []
        var indexes: [Identity: Int] = [:]
        for key in keys {
            let identity = Identity(suite: ObjectIdentifier(key.suite), name: key.name)
            if indexes[identity] == nil {
                indexes[identity] = unique.count
                unique.append(key)
            }
        }
        self.keys = unique
        self.indexes = indexes
    }

    /// Reads every key's current object from its suite.
    func read() -> ObservedSnapshot {
        ObservedSnapshot(objects: keys.map { StoredObject(value: $0.suite.storedValue(forKey: $0.name)) })
    }

    /// What `key` had in `snapshot`.
    func stored(_ key: Defaults.Keys, in snapshot: ObservedSnapshot) -> StoredObject {
        let identity = Identity(suite: ObjectIdentifier(key.suite), name: key.name)
        guard let index = indexes[identity], index < snapshot.objects.count else { return StoredObject(value: nil) }
        return snapshot.objects[index]
    }

    /// The object `key` had in `snapshot`, for its bridge to decode.
    func object(of key: Defaults.Keys, in snapshot: ObservedSnapshot) -> Any? {
        stored(key, in: snapshot).object
    }

    /// The keys grouped by suite, to register one observer with each suite's change center.
    var bySuite: [(suite: any DefaultsSuite, names: Set<String>)] {
        var groups: [ObjectIdentifier: (suite: any DefaultsSuite, names: Set<String>)] = [:]
        var order: [ObjectIdentifier] = []
        for key in keys {
            let id = ObjectIdentifier(key.suite)
            if groups[id] == nil {
                groups[id] = (key.suite, [])
                order.append(id)
            }
            groups[id]?.names.insert(key.name)
        }
        return order.compactMap { groups[$0] }
    }
}

/// Turns a delivered change into the value of one key.
///
/// The decoding closures of the observation APIs are methods of these small `Sendable` values
/// rather than closures written inside generic functions, so that no closure captures the
/// metatype of a `Value` that need not be `Sendable`.
struct KeyValueReader<Value: Defaults.Serializable>: Sendable {
    let key: Defaults.Key<Value>
    let keys: ObservedKeys

    init(_ key: Defaults.Key<Value>) {
        self.key = key
        keys = ObservedKeys([key])
    }

    /// The key's value after the change.
    func newValue(_ change: ObservedChange) -> Value {
        key.value(fromStored: keys.object(of: key, in: change.new))
    }

    /// The key's value after the change, marked as initial or update.
    func change(_ change: ObservedChange) -> Defaults.Change<Value> {
        let value = newValue(change)
        return change.isInitial ? .initial(value) : .update(value)
    }

    /// The change as ``Defaults/KeyChange``.
    func keyChange(_ change: ObservedChange) -> Defaults.KeyChange<Value> {
        let newValue = newValue(change)
        // The initial notification decodes once, so a dynamic default is computed once.
        let oldValue = change.isInitial ? newValue : key.value(fromStored: keys.object(of: key, in: change.old))
        return Defaults.KeyChange(oldValue: oldValue, newValue: newValue, isInitial: change.isInitial)
    }
}

/// Calls a ``Defaults/observe(_:options:handler:)`` handler with each change.
struct KeyChangeHandler<Value: Defaults.Serializable>: Sendable {
    let reader: KeyValueReader<Value>
    let handler: @Sendable (Defaults.KeyChange<Value>) -> Void

    func deliver(_ change: ObservedChange) {
        handler(reader.keyChange(change))
    }
}

/// Turns a delivered change into the values of several keys, as a tuple.
struct KeyValuesReader<each Value: Defaults.Serializable>: Sendable {
    let keys: (repeat Defaults.Key<each Value>)
    let observed: ObservedKeys

    init(_ keys: repeat Defaults.Key<each Value>) {
        var list: [Defaults.Keys] = []
        for key in repeat each keys {
            list.append(key)
        }
        self.keys = (repeat each keys)
        observed = ObservedKeys(list)
    }

    func newValues(_ change: ObservedChange) -> (repeat each Value) {
        (repeat value(of: each keys, in: change))
    }

    private func value<One>(of key: Defaults.Key<One>, in change: ObservedChange) -> One {
        key.value(fromStored: observed.object(of: key, in: change.new))
    }
}
