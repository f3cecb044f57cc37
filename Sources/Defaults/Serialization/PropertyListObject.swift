import DefaultsPropertyList
import Foundation

/// Operations on property-list objects held as `Any` (`String`, `Int`, `UInt64`, `Double`,
/// `Bool`, `Date`, `Data`, `[Any]`, `[String: Any]`), on top of the codec's own.
enum PropertyListObject {
    /// Whether two property-list objects hold the same value.
    static func isEqual(_ lhs: Any, _ rhs: Any) -> Bool {
        PropertyList.isEqual(lhs, rhs)
    }

    /// Whether two optional objects hold the same value (both absent counts as equal).
    static func isEqual(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case let (lhs?, rhs?): PropertyList.isEqual(lhs, rhs)
        default: false
        }
    }

    /// Feeds a property-list object to a hasher, consistently with ``isEqual(_:_:)-(Any,Any)``.
    static func hash(_ object: Any, into hasher: inout Hasher) {
        switch object {
        case let value as String: hasher.combine(value)
        case let value as Bool: hasher.combine(value)
        case let value as Int: hasher.combine(value)
        case let value as UInt64: hasher.combine(value)
        case let value as Double: hasher.combine(value.isNaN ? .nan : value)
        case let value as Date: hasher.combine(value)
        case let value as Data: hasher.combine(value)
        case let array as [Any]:
            hasher.combine(array.count)
            for element in array { hash(element, into: &hasher) }
        case let dictionary as [String: Any]:
            hasher.combine(dictionary.count)
            // Order-independent, as dictionary equality is.
            var combined = 0
            for (key, value) in dictionary {
                var entryHasher = Hasher()
                entryHasher.combine(key)
                hash(value, into: &entryHasher)
                combined ^= entryHasher.finalize()
            }
            hasher.combine(combined)
        default: hasher.combine(String(describing: type(of: object)))
        }
    }

    /// Turns what Foundation hands back (`NSNumber`, `NSString`, `[AnyHashable: Optional<Any>]`,
    /// arrays of optionals) into the library's plain Swift objects; `nil` for anything that is not
    /// a property-list value.
    static func normalized(_ object: Any) -> Any? {
        try? PropertyList.normalize(object)
    }
}
