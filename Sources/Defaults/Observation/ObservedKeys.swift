/// The distinct keys one observation watches, with where each one's object sits in their
/// ``ObservedValues``.
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
    func read() -> ObservedValues {
        ObservedValues(objects: keys.map { StoredObject(value: $0.suite.storedValue(forKey: $0.name)) })
    }

    /// What `key` had in `values`.
    func stored(_ key: Defaults.Keys, in values: ObservedValues) -> StoredObject {
        let identity = Identity(suite: ObjectIdentifier(key.suite), name: key.name)
        guard let index = indexes[identity], index < values.objects.count else { return StoredObject(value: nil) }
        return values.objects[index]
    }

    /// The object `key` had in `values`, for its bridge to decode.
    func object(of key: Defaults.Keys, in values: ObservedValues) -> Any? {
        stored(key, in: values).object
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
