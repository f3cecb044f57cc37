import Foundation

/// What kind of property-list value an `Any` holds: one level of it, its containers' elements
/// still `Any`.
///
/// The writers, ``PropertyListValue/init(_:)`` and ``PropertyList/isEqual(_:_:)`` switch over
/// this instead of casting `Any` again and again; containers keep their elements as `Any` so
/// that classifying never copies a whole tree.
enum PropertyListClassification {
    case string(String)
    case int(Int)
    /// Only for values above `Int.max`; smaller unsigned values classify as `.int`.
    case uint(UInt64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([Any])
    case dictionary([String: Any])
    /// A dictionary bridged from Foundation or typed with non-`String` keys; its keys still have to be checked.
    case hashableDictionary([AnyHashable: Any])
    /// `Optional<Any>.none`, as Foundation on Linux hands back inside nested collections.
    case null
    case unsupported(Any.Type)

    /// Classifies `value`, unwrapping `Optional` wrappers and bridging Foundation objects.
    static func classify(_ value: Any) -> PropertyListClassification {
        let type = Swift.type(of: value)
        // Exact-type checks first: they are pointer comparisons, and they keep
        // a Swift `Int` 1 from being taken for `true` by a bridging `as? Bool`.
        if type == String.self, let v = value as? String { return .string(v) }
        if type == Int.self, let v = value as? Int { return .int(v) }
        if type == [String: Any].self, let v = value as? [String: Any] { return .dictionary(v) }
        if type == [Any].self, let v = value as? [Any] { return .array(v) }
        if type == Bool.self, let v = value as? Bool { return .bool(v) }
        if type == Double.self, let v = value as? Double { return .double(v) }
        if type == Date.self, let v = value as? Date { return .date(v) }
        if type == Data.self, let v = value as? Data { return .data(v) }
        if type == UInt64.self, let v = value as? UInt64 { return unsigned(v) }
        if type == PropertyListValue.self, let v = value as? PropertyListValue { return classify(v) }
        if type is NSNumber.Type, let n = value as? NSNumber { return number(n) }
        if let optional = value as? any OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { return .null }
            return classify(wrapped)
        }
        if type == Int64.self, let v = value as? Int64 { return .int(Int(v)) }
        if type == Int32.self, let v = value as? Int32 { return .int(Int(v)) }
        if type == Int16.self, let v = value as? Int16 { return .int(Int(v)) }
        if type == Int8.self, let v = value as? Int8 { return .int(Int(v)) }
        if type == UInt.self, let v = value as? UInt { return unsigned(UInt64(v)) }
        if type == UInt32.self, let v = value as? UInt32 { return .int(Int(v)) }
        if type == UInt16.self, let v = value as? UInt16 { return .int(Int(v)) }
        if type == UInt8.self, let v = value as? UInt8 { return .int(Int(v)) }
        if type == Float.self, let v = value as? Float { return .double(Double(v)) }
        // Foundation objects and differently typed Swift collections, through bridging casts.
        if type is NSString.Type, let v = value as? String { return .string(v) }
        if type is NSDate.Type, let v = value as? Date { return .date(v) }
        if type is NSData.Type, let v = value as? Data { return .data(v) }
        if let v = value as? [String: Any] { return .dictionary(v) }
        if let v = value as? [AnyHashable: Any] { return .hashableDictionary(v) }
        if let v = value as? [Any] { return .array(v) }
        return .unsupported(type)
    }

    /// One level of a ``PropertyListValue``, so that the writers take it like any other value.
    /// A container's elements are boxed as `Any` (a copy of that level, not of the tree below).
    private static func classify(_ value: PropertyListValue) -> PropertyListClassification {
        switch value {
        case .string(let v): .string(v)
        case .integer(let v): .int(v)
        case .unsignedInteger(let v): unsigned(v)
        case .real(let v): .double(v)
        case .boolean(let v): .bool(v)
        case .date(let v): .date(v)
        case .data(let v): .data(v)
        case .array(let v): .array(v.map { $0 as Any })
        case .dictionary(let v): .dictionary(v.mapValues { $0 as Any })
        }
    }

    private static func unsigned(_ v: UInt64) -> PropertyListClassification {
        v <= UInt64(Int.max) ? .int(Int(v)) : .uint(v)
    }

    /// Tells a boolean `NSNumber` from a numeric one, then picks the widest matching Swift type.
    private static func number(_ n: NSNumber) -> PropertyListClassification {
        if isBoolean(n) { return .bool(n.boolValue) }
        switch UInt8(bitPattern: n.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            return .double(n.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
            return unsigned(n.uint64Value)
        default:
            return .int(n.intValue)
        }
    }

    /// Booleans are the two shared `NSNumber` instances (`kCFBooleanTrue`/`False`)
    /// on Apple platforms and on Linux alike; the class check catches boolean
    /// numbers made some other way. `objCType` cannot tell: it is `c` for `Int8` too.
    private static func isBoolean(_ n: NSNumber) -> Bool {
        n === trueNumber || n === falseNumber || ObjectIdentifier(Swift.type(of: n)) == booleanClass
    }

    private static let trueNumber = NSNumber(value: true)
    private static let falseNumber = NSNumber(value: false)
    private static let booleanClass = ObjectIdentifier(Swift.type(of: NSNumber(value: true)))
}

/// Lets `classify` look inside any `Optional` held in an `Any`.
protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    var wrappedAny: Any? {
        switch self {
        case .some(let wrapped): return wrapped
        case .none: return nil
        }
    }
}

extension PropertyListClassification {
    /// The error for a value that cannot be written: `nil` (when `type` is `nil`) or a value of `type`.
    static func unrepresentable(_ type: Any.Type?) -> PropertyListError {
        PropertyListError(
            kind: .unsupportedValue,
            message: type.map { "a value of type \($0) has no property-list representation" }
                ?? "nil has no property-list representation",
            keyPath: "")
    }

    /// Formats a dictionary key as a key-path component.
    static func keyComponent(_ key: String) -> String {
        "[\"" + key + "\"]"
    }

    /// Checks and converts the keys of a bridged dictionary.
    static func stringKeyed(_ dictionary: [AnyHashable: Any]) throws(PropertyListError) -> [(key: String, value: Any)] {
        var result: [(key: String, value: Any)] = []
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            guard let string = key.base as? String else {
                throw PropertyListError(
                    kind: .unsupportedValue,
                    message: "dictionary key \(key.base) of type \(Swift.type(of: key.base)) is not a String",
                    keyPath: ""
                )
            }
            result.append((string, value))
        }
        return result
    }
}
