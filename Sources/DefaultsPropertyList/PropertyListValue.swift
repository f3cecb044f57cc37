import Foundation

/// One property-list value: a string, a number, a boolean, a date, data, or an array or
/// dictionary of these. `Sendable` and `Hashable`, so it can cross threads and locks and be
/// compared without casting.
///
/// It is the typed twin of the `Any` values the rest of this module reads and writes
/// (Foundation's model): ``init(_:)`` classifies an `Any` (Foundation objects included), and
/// ``object`` gives the plain Swift object back.
///
/// ```swift
/// let value = try PropertyListValue(["volume": 0.5, "names": ["a", "b"]] as [String: Any])
/// value["volume"]                      // .real(0.5)
/// let data = try PropertyList.encodeXML(value)
/// try PropertyList.decodeValue(data) == value   // true
/// ```
///
/// Equality is the property-list one of ``PropertyList/isEqual(_:_:)``: `NaN` equals `NaN`, and
/// `1`, `1.0` and `true` are three different values. Hashing agrees with it.
public enum PropertyListValue: Sendable {
    /// A string.
    case string(String)
    /// A signed integer, or an unsigned one up to `Int.max`.
    case integer(Int)
    /// An unsigned integer above `Int.max`, which `Int` cannot hold. Smaller values are
    /// ``integer(_:)`` (and equal to it when made as this case).
    case unsignedInteger(UInt64)
    /// A floating-point number (`<real>`).
    case real(Double)
    /// `true` or `false`; never equal to a number.
    case boolean(Bool)
    /// A point in time.
    case date(Date)
    /// Raw bytes.
    case data(Data)
    /// An ordered list of values.
    case array([PropertyListValue])
    /// Values by string key.
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// Classifies a Foundation-style value: `String`, `Int` and the other integer types, `UInt64`,
    /// `Double`, `Float`, `Bool`, `Date`, `Data`, arrays and `String`-keyed dictionaries of these,
    /// what Foundation hands out (`NSNumber`, a boolean one as ``boolean(_:)``, `NSString`,
    /// `NSArray`, `NSDictionary`, `[AnyHashable: Any]`) and `Optional` wrappers around any of them.
    ///
    /// - Throws: ``PropertyListError`` of kind `unsupportedValue`, naming the type and the key
    ///   path (such as `["window"]["frames"][2]`), for a value with no property-list form (a `nil`,
    ///   a `URL`, a non-string dictionary key, ...), or `tooDeep` for containers nested deeper than
    ///   ``PropertyList/maximumDepth``.
    public init(_ object: Any) throws(PropertyListError) {
        self = try Self.make(object, depth: 0)
    }

    /// The plain Swift object of this value, as this module's readers give it: `String`, `Int`,
    /// `UInt64` (above `Int.max` only), `Double`, `Bool`, `Date`, `Data`, `[Any]` or
    /// `[String: Any]`.
    public var object: Any {
        switch self {
        case .string(let v): v
        case .integer(let v): v
        case .unsignedInteger(let v): v <= UInt64(Int.max) ? Int(v) : v
        case .real(let v): v
        case .boolean(let v): v
        case .date(let v): v
        case .data(let v): v
        case .array(let v): v.map(\.object)
        case .dictionary(let v): v.mapValues(\.object)
        }
    }

    /// The element at `index` of an array value; `nil` for another value or an index out of range.
    public subscript(index: Int) -> PropertyListValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The value for `key` of a dictionary value; `nil` for another value or a missing key.
    public subscript(key: String) -> PropertyListValue? {
        guard case .dictionary(let dictionary) = self else { return nil }
        return dictionary[key]
    }

    private static func make(_ object: Any, depth: Int) throws(PropertyListError) -> PropertyListValue {
        switch PropertyListClassification.classify(object) {
        case .string(let v): return .string(v)
        case .int(let v): return .integer(v)
        case .uint(let v): return .unsignedInteger(v)
        case .double(let v): return .real(v)
        case .bool(let v): return .boolean(v)
        case .date(let v): return .date(v)
        case .data(let v): return .data(v)
        case .array(let array):
            try checkDepth(depth)
            var result: [PropertyListValue] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                do {
                    result.append(try make(element, depth: depth + 1))
                } catch {
                    throw error.prependingKeyPath("[\(index)]")
                }
            }
            return .array(result)
        case .dictionary(let dictionary):
            try checkDepth(depth)
            return .dictionary(
                try makeEntries(
                    dictionary.lazy.map { (key: $0.key, value: $0.value) }, count: dictionary.count, depth: depth))
        case .hashableDictionary(let dictionary):
            try checkDepth(depth)
            let entries = try PropertyListClassification.stringKeyed(dictionary)
            return .dictionary(try makeEntries(entries, count: entries.count, depth: depth))
        case .null:
            throw PropertyListClassification.unrepresentable(nil)
        case .unsupported(let type):
            throw PropertyListClassification.unrepresentable(type)
        }
    }

    private static func makeEntries(
        _ entries: some Sequence<(key: String, value: Any)>,
        count: Int,
        depth: Int
    ) throws(PropertyListError) -> [String: PropertyListValue] {
        var result: [String: PropertyListValue] = [:]
        result.reserveCapacity(count)
        for (key, value) in entries {
            do {
                result[key] = try make(value, depth: depth + 1)
            } catch {
                throw error.prependingKeyPath(PropertyListClassification.keyComponent(key))
            }
        }
        return result
    }

    private static func checkDepth(_ depth: Int) throws(PropertyListError) {
        if depth >= PropertyList.maximumDepth {
            throw PropertyListError(
                kind: .tooDeep, message: "containers are nested deeper than \(PropertyList.maximumDepth) levels",
                keyPath: "")
        }
    }
}

extension PropertyListValue: Hashable {
    /// Property-list equality: `NaN` equals `NaN` (in reals and dates), `0.0` equals `-0.0`, an
    /// ``unsignedInteger(_:)`` up to `Int.max` equals the same ``integer(_:)``; values of
    /// different kinds (`1`, `1.0`, `true`) are never equal.
    public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs.canonical, rhs.canonical) {
        case (.string(let a), .string(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.unsignedInteger(let a), .unsignedInteger(let b)): a == b
        case (.real(let a), .real(let b)): a == b || (a.isNaN && b.isNaN)
        case (.boolean(let a), .boolean(let b)): a == b
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate == b.timeIntervalSinceReferenceDate
                || (a.timeIntervalSinceReferenceDate.isNaN && b.timeIntervalSinceReferenceDate.isNaN)
        case (.data(let a), .data(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a == b
        default: false
        }
    }

    /// Hashes consistently with ``==(_:_:)``: every `NaN` alike, the kind of value included.
    public func hash(into hasher: inout Hasher) {
        switch canonical {
        case .string(let v):
            hasher.combine(0 as UInt8)
            hasher.combine(v)
        case .integer(let v):
            hasher.combine(1 as UInt8)
            hasher.combine(v)
        case .unsignedInteger(let v):
            hasher.combine(2 as UInt8)
            hasher.combine(v)
        case .real(let v):
            hasher.combine(3 as UInt8)
            hasher.combine(v.isNaN ? .nan : v)
        case .boolean(let v):
            hasher.combine(4 as UInt8)
            hasher.combine(v)
        case .date(let v):
            hasher.combine(5 as UInt8)
            let interval = v.timeIntervalSinceReferenceDate
            hasher.combine(interval.isNaN ? .nan : interval)
        case .data(let v):
            hasher.combine(6 as UInt8)
            hasher.combine(v)
        case .array(let v):
            hasher.combine(7 as UInt8)
            hasher.combine(v)
        case .dictionary(let v):
            hasher.combine(8 as UInt8)
            hasher.combine(v)
        }
    }

    /// An ``unsignedInteger(_:)`` that fits in `Int` as the ``integer(_:)`` the readers make of it.
    private var canonical: PropertyListValue {
        if case .unsignedInteger(let v) = self, v <= UInt64(Int.max) {
            return .integer(Int(v))
        }
        return self
    }
}

extension PropertyListValue: CustomStringConvertible {
    /// The value in old-style text, as ``PropertyList/openStepDescription(_:)`` prints it.
    public var description: String {
        PropertyList.openStepDescription(self)
    }
}

extension PropertyListValue {
    /// The property-list name of the value's kind, for messages.
    package var kindName: String {
        switch self {
        case .string: "a string"
        case .boolean: "a boolean"
        case .integer, .unsignedInteger: "an integer"
        case .real: "a real"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }
}
