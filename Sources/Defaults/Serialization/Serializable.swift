extension Defaults {
    /// A type that can be stored: see ``DefaultsSerializable``.
    public typealias Serializable = DefaultsSerializable
    /// Converts a value to and from what is stored: see ``DefaultsBridge``.
    public typealias Bridge = DefaultsBridge
    /// A collection stored as an array: see ``DefaultsCollectionSerializable``.
    public typealias CollectionSerializable = DefaultsCollectionSerializable
    /// A set algebra stored as an array: see ``DefaultsSetAlgebraSerializable``.
    public typealias SetAlgebraSerializable = DefaultsSetAlgebraSerializable
    /// Makes a `Codable & RawRepresentable` type store its raw value.
    public typealias PreferRawRepresentable = DefaultsPreferRawRepresentable
    /// Makes a `Codable & NSSecureCoding` type store keyed-archive data.
    public typealias PreferNSSecureCoding = DefaultsPreferNSSecureCoding
    /// Makes a `Codable` type store a native property list instead of a JSON string.
    public typealias PreferPropertyList = DefaultsPreferPropertyList
}

/// A type whose values can be stored in a suite.
///
/// The type names a ``DefaultsBridge`` that turns its values into property-list objects and back.
/// Many types conform already (numbers, `String`, `Bool`, `Date`, `Data`, `URL`, `UUID`, ranges,
/// optionals and collections of these); `Codable`, `RawRepresentable` and `NSSecureCoding` types
/// only need to declare the conformance:
///
/// ```swift
/// struct User: Codable, Defaults.Serializable {
///     let name: String
///     let age: String
/// }
/// ```
public protocol DefaultsSerializable {
    /// The type a bridge turns into its stored form.
    typealias Value = Bridge.Value
    /// The stored form.
    typealias Serializable = Bridge.Serializable
    /// The bridge's type.
    associatedtype Bridge: DefaultsBridge where Bridge.Value == Self
    /// The bridge that serializes this type.
    static var bridge: Bridge { get }
    /// Whether values are stored as themselves (numbers, strings, dates, data, and arrays and
    /// string-keyed dictionaries of these), so that a read can skip the bridge. `false` by default.
    static var isNativelySupportedType: Bool { get }
}

extension DefaultsSerializable {
    public static var isNativelySupportedType: Bool { false }
}

/// Converts values of one type to a property-list object (its `Serializable`) and back.
///
/// ```swift
/// struct UserBridge: Defaults.Bridge {
///     typealias Value = User
///     typealias Serializable = [String: String]
///
///     func serialize(_ value: User?) -> [String: String]? {
///         value.map { ["name": $0.name, "age": $0.age] }
///     }
///
///     func deserialize(_ object: [String: String]?) -> User? {
///         guard let object, let name = object["name"], let age = object["age"] else { return nil }
///         return User(name: name, age: age)
///     }
/// }
/// ```
public protocol DefaultsBridge {
    /// The type you use.
    associatedtype Value
    /// The property-list type that is stored.
    associatedtype Serializable

    /// Turns a value into what is stored; `nil` when it cannot be stored.
    func serialize(_ value: Value?) -> Serializable?
    /// Turns what is stored back into a value; `nil` when it is not a valid `Value`.
    func deserialize(_ object: Serializable?) -> Value?
}

/// A collection that is stored as an array of its elements.
public protocol DefaultsCollectionSerializable: Collection, DefaultsSerializable {
    /// Creates the collection from the stored elements.
    init(_ elements: [Element])
}

/// A set algebra that is stored as an array of its elements.
public protocol DefaultsSetAlgebraSerializable: SetAlgebra, DefaultsSerializable {
    /// The elements to store.
    func toArray() -> [Element]
}

/// Marks a `Codable & RawRepresentable` type to be stored as its raw value rather than as JSON.
public protocol DefaultsPreferRawRepresentable: RawRepresentable {}

/// Marks a `Codable & NSSecureCoding` type to be stored as keyed-archive data rather than as JSON.
public protocol DefaultsPreferNSSecureCoding {}

/// Marks a `Codable` type to be stored as a native property list (dictionaries, arrays, numbers)
/// rather than as a JSON string, so that property-list tools can read and edit it.
public protocol DefaultsPreferPropertyList: Codable {}

/// Lets generic code ask whether a value is `Optional.none`.
@usableFromInline
protocol OptionalProtocol {
    var isNil: Bool { get }
}

extension Optional: OptionalProtocol {
    @usableFromInline var isNil: Bool { self == nil }
}
