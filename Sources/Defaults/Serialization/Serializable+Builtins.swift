import Foundation

extension Int: Defaults.Serializable {
    public static let bridge = Defaults.IntegerBridge<Int>()
    public static var isNativelySupportedType: Bool { true }
}
extension Int8: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<Int8>() }
extension Int16: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<Int16>() }
extension Int32: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<Int32>() }
extension Int64: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<Int64>() }
extension UInt: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<UInt>() }
extension UInt8: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<UInt8>() }
extension UInt16: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<UInt16>() }
extension UInt32: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<UInt32>() }
extension UInt64: Defaults.Serializable { public static let bridge = Defaults.IntegerBridge<UInt64>() }
extension Double: Defaults.Serializable {
    public static let bridge = Defaults.FloatingPointBridge<Double>()
    public static var isNativelySupportedType: Bool { true }
}
extension Float: Defaults.Serializable { public static let bridge = Defaults.FloatingPointBridge<Float>() }
extension CGFloat: Defaults.Serializable { public static let bridge = Defaults.FloatingPointBridge<CGFloat>() }
extension Bool: Defaults.Serializable {
    public static let bridge = Defaults.BoolBridge()
    public static var isNativelySupportedType: Bool { true }
}
extension String: Defaults.Serializable {
    public static let bridge = Defaults.IdentityBridge<String>()
    public static var isNativelySupportedType: Bool { true }
}
extension Date: Defaults.Serializable {
    public static let bridge = Defaults.IdentityBridge<Date>()
    public static var isNativelySupportedType: Bool { true }
}
extension Data: Defaults.Serializable {
    public static let bridge = Defaults.IdentityBridge<Data>()
    public static var isNativelySupportedType: Bool { true }
}
extension URL: Defaults.Serializable { public static let bridge = Defaults.URLBridge() }
extension UUID: Defaults.Serializable { public static let bridge = Defaults.UUIDBridge() }

extension Optional: Defaults.Serializable where Wrapped: Defaults.Serializable {
    public static var bridge: Defaults.OptionalBridge<Wrapped> { .init() }
    public static var isNativelySupportedType: Bool { Wrapped.isNativelySupportedType }
}

extension Array: Defaults.Serializable where Element: Defaults.Serializable {
    public static var bridge: Defaults.ArrayBridge<Element> { .init() }
    public static var isNativelySupportedType: Bool { Element.isNativelySupportedType }
}

extension Set: Defaults.Serializable where Element: Defaults.Serializable {
    public static var bridge: Defaults.SetBridge<Element> { .init() }
}

extension Dictionary: Defaults.Serializable where Key: LosslessStringConvertible, Value: Defaults.Serializable {
    public static var bridge: Defaults.DictionaryBridge<Key, Value> { .init() }
    public static var isNativelySupportedType: Bool { Key.self == String.self && Value.isNativelySupportedType }
}

extension Range: Defaults.Serializable where Bound: Defaults.Serializable {
    public static var bridge: Defaults.RangeBridge<Bound> { .init() }
}

extension ClosedRange: Defaults.Serializable where Bound: Defaults.Serializable {
    public static var bridge: Defaults.ClosedRangeBridge<Bound> { .init() }
}
