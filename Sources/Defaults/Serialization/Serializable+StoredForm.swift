// The one rule for turning a value into what a suite stores and back, which every path (keys,
// collections, `AnySerializable`, snapshots, launch arguments) goes through.

extension DefaultsSerializable {
    /// What a suite stores for `value`: what its bridge makes of it, itself serialized in turn
    /// while that is a ``DefaultsSerializable`` type that is not stored as itself.
    ///
    /// A bridge may hand back values of another serializable type rather than property-list
    /// objects (a range bridge whose `Serializable` is `[Time]`, `Time` being `Codable`); Defaults
    /// stores those as their own bridges store them (here an array of JSON strings), and so does
    /// this library, so that the stored form reads back through ``DefaultsSuite/object(forKey:)``
    /// as Defaults' does. `nil` when a bridge gives nothing to store.
    @inlinable
    static func storedForm(of value: Self) -> Any? {
        guard let serialized = bridge.serialize(value) else { return nil }
        guard let nested = nestedSerializable else { return serialized }
        return nested.storedForm(ofAny: serialized)
    }

    /// The value whose stored form is `object`, as ``storedForm(of:)`` made it; `nil` if `object`
    /// is not one (a value of another type, a damaged value).
    @inlinable
    static func value(fromStoredForm object: Any) -> Self? {
        guard let nested = nestedSerializable else {
            return bridge.deserialize(object as? Serializable)
        }
        return bridge.deserialize(nested.value(fromStoredForm: object) as? Serializable)
    }

    /// The type of the bridge's `Serializable` when that is itself to be serialized again: a
    /// ``DefaultsSerializable`` type other than `Self` that is not stored as itself. A metatype
    /// check, so no value is cast or boxed for it.
    @usableFromInline
    static var nestedSerializable: (any DefaultsSerializable.Type)? {
        guard let nested = Serializable.self as? any DefaultsSerializable.Type,
            ObjectIdentifier(nested) != ObjectIdentifier(Self.self),
            !nested.isNativelySupportedType
        else { return nil }
        return nested
    }

    /// ``storedForm(of:)`` for a value known only as `Any`: what an existential metatype can call.
    @usableFromInline
    static func storedForm(ofAny value: Any) -> Any? {
        guard let value = value as? Self else { return nil }
        return storedForm(of: value)
    }
}
