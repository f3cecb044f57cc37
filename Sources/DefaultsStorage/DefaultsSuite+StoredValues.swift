import DefaultsPropertyList

/// Reading a suite as `Sendable` property-list values: straight from the store of a suite of this
/// library, converted from the objects of any other.
extension DefaultsSuite {
    /// What a read of `key` returns, as a `Sendable` value: what observation and snapshots keep.
    /// `nil` as well for an object that is not a property-list value.
    package func storedValue(forKey key: String) -> PropertyListValue? {
        if let suite = backend.storeBacked {
            return suite.store.value(forKey: key)
        }
        return PropertyListValue.from(object(forKey: key))
    }

    /// The suite's stored values by domain, highest precedence first: the administrator's enforced
    /// values, the user's, the vendor's defaults (for suites that have them), each key read from
    /// the first that holds it. For readers that resolve keys of their own, such as dotted paths
    /// into nested dictionaries (`DefaultsProvider`).
    package func storedValueLayers() -> [[String: PropertyListValue]] {
        if let suite = backend.storeBacked {
            return suite.store.read { $0.domains.storedLayers }
        }
        return [persistentStoredValues()]
    }

    /// The persistent values as `Sendable` values, without converting where the suite keeps them so.
    package func persistentStoredValues() -> [String: PropertyListValue] {
        if let suite = backend.storeBacked {
            return suite.store.persistent
        }
        return persistentValues().compactMapValues(PropertyListValue.from)
    }
}
