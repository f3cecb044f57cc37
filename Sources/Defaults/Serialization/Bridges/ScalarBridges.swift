import Foundation

extension Defaults {
    /// Stores a value as itself: the bridge of `String`, `Date` and `Data`.
    public struct IdentityBridge<Value>: Bridge, Sendable {
        public typealias Serializable = Value
        public init() {}
        public func serialize(_ value: Value?) -> Value? { value }
        public func deserialize(_ object: Value?) -> Value? { object }
    }

    /// Stores an integer as a property-list integer.
    ///
    /// Reads accept an integer in range, a double with an exact integer value, or a string that
    /// parses as an integer (launch arguments arrive as strings), as Foundation's
    /// `integer(forKey:)` does.
    public struct IntegerBridge<Value: FixedWidthInteger & Sendable>: Bridge, Sendable {
        public typealias Serializable = Any
        public init() {}

        public func serialize(_ value: Value?) -> Any? {
            guard let value else { return nil }
            return Int(exactly: value) ?? UInt64(exactly: value)
        }

        public func deserialize(_ object: Any?) -> Value? {
            switch object {
            case let value as Int: Value(exactly: value)
            case let value as UInt64: Value(exactly: value)
            case let value as Double: Value(exactly: value)
            case let value as String: Value(value.trimmingCharacters(in: .whitespaces))
            default: nil
            }
        }
    }

    /// Stores a floating-point number as a property-list real.
    ///
    /// Reads accept a real, an integer, or a string that parses as a number.
    public struct FloatingPointBridge<Value: BinaryFloatingPoint & Sendable>: Bridge, Sendable {
        public typealias Serializable = Any
        public init() {}

        public func serialize(_ value: Value?) -> Any? {
            value.map { Double($0) }
        }

        public func deserialize(_ object: Any?) -> Value? {
            switch object {
            case let value as Double: Value(value)
            case let value as Int: Value(value)
            case let value as UInt64: Value(value)
            case let value as String: Double(value.trimmingCharacters(in: .whitespaces)).map(Value.init)
            default: nil
            }
        }
    }

    /// Stores a `Bool` as a property-list boolean.
    ///
    /// Reads accept a boolean, the integers 0 and 1, and the strings `YES`, `NO`, `true`, `false`,
    /// `1` and `0` in any case, as Foundation's `bool(forKey:)` does.
    public struct BoolBridge: Bridge, Sendable {
        public typealias Value = Bool
        public typealias Serializable = Any
        public init() {}

        public func serialize(_ value: Bool?) -> Any? { value }

        public func deserialize(_ object: Any?) -> Bool? {
            switch object {
            case let value as Bool: value
            case let value as Int where value == 0 || value == 1: value == 1
            case let value as String:
                switch value.lowercased() {
                case "yes", "true", "1": true
                case "no", "false", "0": false
                default: nil
                }
            default: nil
            }
        }
    }

    /// Stores a `URL` as its absolute string (Foundation on Linux does not round-trip URL objects).
    public struct URLBridge: Bridge, Sendable {
        public typealias Value = URL
        public typealias Serializable = String
        public init() {}
        public func serialize(_ value: URL?) -> String? { value?.absoluteString }
        public func deserialize(_ object: String?) -> URL? { object.flatMap(URL.init(string:)) }
    }

    /// Stores a `UUID` as its string form.
    public struct UUIDBridge: Bridge, Sendable {
        public typealias Value = UUID
        public typealias Serializable = String
        public init() {}
        public func serialize(_ value: UUID?) -> String? { value?.uuidString }
        public func deserialize(_ object: String?) -> UUID? { object.flatMap(UUID.init(uuidString:)) }
    }
}
