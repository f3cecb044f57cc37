/// What the snapshots of one store share: the schema, the keys they read (in the store's suite),
/// and where each of the schema's keys sits in a snapshot's values.
final class SnapshotLayout<Schema: Defaults.SnapshotSchema>: Sendable {
    let schema: Schema
    /// The keys read, without duplicates, each in the suite the store reads.
    let keys: [Defaults.Keys]
    /// The position in ``keys`` of each of the schema's own keys.
    private let positions: [Defaults.Keys: Int]

    init(schema: Schema, suite: (any DefaultsSuite)?) {
        self.schema = schema
        var keys: [Defaults.Keys] = []
        var positions: [Defaults.Keys: Int] = [:]
        var targetPositions: [Defaults.Keys: Int] = [:]
        for key in schema.schemaKeys where positions[key] == nil {
            let target = suite.map { suite in (key as? any SuiteRetargetableKey)?.retargeted(to: suite) ?? key } ?? key
            if let position = targetPositions[target] {
                positions[key] = position
            } else {
                positions[key] = keys.count
                targetPositions[target] = keys.count
                keys.append(target)
            }
        }
        self.keys = keys
        self.positions = positions
    }

    /// Where `key`, one of the schema's keys, sits in ``keys``; `nil` for a key not in the schema.
    func position(of key: Defaults.Keys) -> Int? {
        positions[key]
    }

    /// What the keys read now.
    func read() -> [StoredObject] {
        keys.map { StoredObject(value: $0.suite.storedValue(forKey: $0.name)) }
    }

    /// The schema's key at `keyPath`, with its position; reports a key that is not in the schema.
    func key<Value>(at keyPath: KeyPath<Schema, Defaults.Key<Value>>) -> (key: Defaults.Key<Value>, position: Int?) {
        let key = schema[keyPath: keyPath]
        let position = positions[key]
        if position == nil {
            Defaults.logger.error(
                "The key is not one of the snapshot schema's keys: list it in schemaKeys",
                metadata: ["key": "\(key.name)", "schema": "\(Schema.self)"]
            )
            assertionFailure("The key \"\(key.name)\" is not one of the keys of \(Schema.self): list it in schemaKeys.")
        }
        return (key, position)
    }
}
