// Names Defaults uses for things this library names otherwise, so that code written for Defaults
// compiles unchanged.

extension Defaults {
    /// Defaults' name for ``CodableBridge`` used as a type's own bridge.
    public typealias TopLevelCodableBridge<Value: Codable> = CodableBridge<Value>

    /// Defaults' bridge for an enum that is both `RawRepresentable` and `Codable`: stored as JSON,
    /// as ``CodableBridge`` stores it.
    public typealias RawRepresentableCodableBridge<Value: RawRepresentable & Codable> = CodableBridge<Value>

    /// Defaults' name for ``AnySerializableBridge``.
    public typealias AnyBridge = AnySerializableBridge

    /// Defaults' name for the type-erased key, ``Keys``.
    public typealias _AnyKey = Keys
}

/// Defaults' aliases, for code that has its own type named `Defaults` or `Default`.
public typealias _Defaults = Defaults
/// Defaults' alias of the property wrapper ``Default``.
public typealias _Default = Default

/// Defaults' protocol for telling whether a value of an unknown optional type is `nil`.
public protocol _DefaultsOptionalProtocol: ExpressibleByNilLiteral {
    /// Whether the value is `nil`.
    var _defaults_isNil: Bool { get }
}

extension Optional: _DefaultsOptionalProtocol {
    public var _defaults_isNil: Bool { self == nil }
}
