import DefaultsPropertyList

/// Property-list objects held as `Any` (what ``DefaultsSuite/object(forKey:)`` returns and
/// bridges produce), compared and hashed as the ``PropertyListValue`` they stand for.
extension PropertyListValue {
    /// Whether two optional objects hold the same property-list value (both absent counts as
    /// equal; objects that are not property-list values are unequal).
    static func isEqual(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case let (lhs?, rhs?): PropertyList.isEqual(lhs, rhs)
        default: false
        }
    }

    /// What Foundation hands back (`NSNumber`, `NSString`, `[AnyHashable: Optional<Any>]`, arrays
    /// of optionals) as the library's plain Swift objects; `nil` for anything that is not a
    /// property-list value.
    static func normalized(_ object: Any) -> Any? {
        try? PropertyList.normalize(object)
    }

    /// A value from an object, `nil` for anything that is not a property-list value.
    static func from(_ object: Any?) -> PropertyListValue? {
        object.flatMap { try? PropertyListValue($0) }
    }

}

/// A suite that keeps its values as ``PropertyListValue``s and hands them out without converting.
protocol PropertyListValueSuite: DefaultsSuite {
    /// The value a read of `key` returns, as ``DefaultsSuite/object(forKey:)`` resolves it.
    func propertyListValue(forKey key: String) -> PropertyListValue?
    /// The persistent values, as ``DefaultsSuite/persistentValues()`` returns them.
    func persistentPropertyListValues() -> [String: PropertyListValue]
    /// The stored domains, highest precedence first (``SuiteDomains/storedLayers``).
    func storedPropertyListLayers() -> [[String: PropertyListValue]]
}

extension DefaultsSuite {
    /// What a read of `key` returns, as a `Sendable` value: what observation and snapshots keep.
    /// `nil` as well for an object that is not a property-list value.
    func storedValue(forKey key: String) -> PropertyListValue? {
        if let suite = self as? any PropertyListValueSuite {
            return suite.propertyListValue(forKey: key)
        }
        return PropertyListValue.from(object(forKey: key))
    }

    /// The persistent values as `Sendable` values, without converting where the suite keeps them so.
    /// The suite's stored values by domain, highest precedence first: the administrator's enforced
    /// values, the user's, the vendor's defaults (for suites that have them), each key read from
    /// the first that holds it. For readers that resolve keys of their own, such as dotted paths
    /// into nested dictionaries (`DefaultsProvider`).
    package func storedValueLayers() -> [[String: PropertyListValue]] {
        if let suite = self as? any PropertyListValueSuite {
            return suite.storedPropertyListLayers()
        }
        return [persistentStoredValues()]
    }

    package func persistentStoredValues() -> [String: PropertyListValue] {
        if let suite = self as? any PropertyListValueSuite {
            return suite.persistentPropertyListValues()
        }
        return persistentValues().compactMapValues(PropertyListValue.from)
    }
}
