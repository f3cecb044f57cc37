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
    package static func from(_ object: Any?) -> PropertyListValue? {
        object.flatMap { try? PropertyListValue($0) }
    }
}
