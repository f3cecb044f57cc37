import Foundation

/// Operations on property-list objects held as `Any`: `String`, `Int`, `UInt64`, `Double`,
/// `Bool`, `Date`, `Data`, `[Any]`, `[String: Any]`.
enum PropertyListObject {
    /// Whether two property-list objects hold the same value.
    static func isEqual(_ lhs: Any, _ rhs: Any) -> Bool {
        switch (lhs, rhs) {
        case let (lhs as String, rhs as String): lhs == rhs
        case let (lhs as Bool, rhs as Bool): lhs == rhs
        case let (lhs as Int, rhs as Int): lhs == rhs
        case let (lhs as UInt64, rhs as UInt64): lhs == rhs
        case let (lhs as Double, rhs as Double): lhs == rhs || (lhs.isNaN && rhs.isNaN)
        case let (lhs as Date, rhs as Date): lhs == rhs
        case let (lhs as Data, rhs as Data): lhs == rhs
        case let (lhs as [Any], rhs as [Any]):
            lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { isEqual($0, $1) }
        case let (lhs as [String: Any], rhs as [String: Any]):
            lhs.count == rhs.count
                && lhs.allSatisfy { key, value in rhs[key].map { isEqual(value, $0) } ?? false }
        default: false
        }
    }

    /// Whether two optional objects hold the same value (both absent counts as equal).
    static func isEqual(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case let (lhs?, rhs?): isEqual(lhs, rhs)
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
        if let optional = object as? any OptionalProtocol {
            return optional.wrappedObject.flatMap(normalized)
        }
        // Checked by exact type first: Foundation bridges an NSNumber to Bool, Int and Double alike.
        if type(of: object) is NSNumber.Type, let number = object as? NSNumber {
            return normalizedNumber(number)
        }
        if type(of: object) is NSString.Type, let string = object as? NSString {
            return string as String
        }
        switch object {
        case is String, is Bool, is Int, is Double, is Date, is Data, is UInt64:
            return object
        case let array as [Any]:
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for element in array {
                guard let element = normalized(element) else { return nil }
                result.append(element)
            }
            return result
        case let dictionary as [String: Any]:
            return normalizedDictionary(dictionary.lazy.map { (AnyHashable($0.key), $0.value) })
        case let dictionary as [AnyHashable: Any]:
            return normalizedDictionary(dictionary.lazy.map { ($0.key, $0.value) })
        case let value as any BinaryInteger:
            return Int(exactly: value) ?? UInt64(exactly: value)
        case let value as any BinaryFloatingPoint:
            return Double(value)
        default:
            return nil
        }
    }

    private static func normalizedDictionary(_ entries: some Collection<(AnyHashable, Any)>) -> [String: Any]? {
        var result: [String: Any] = [:]
        result.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard let key = key.base as? String, let value = normalized(value) else { return nil }
            result[key] = value
        }
        return result
    }

    private static func normalizedNumber(_ number: NSNumber) -> Any {
        switch String(cString: number.objCType) {
        case "c", "B": number.boolValue
        case "f", "d": number.doubleValue
        case "Q" where number.uint64Value > UInt64(Int.max): number.uint64Value
        default: number.intValue
        }
    }
}
