import Foundation

// The bridge a type gets by declaring `Defaults.Serializable`. When a type has several of these
// capabilities, `Codable` wins unless a `Prefer…` marker says otherwise, as in the Defaults library.

extension DefaultsSerializable where Self: Codable {
    public static var bridge: Defaults.CodableBridge<Self> { .init() }
}

extension DefaultsSerializable where Self: Codable & DefaultsPreferPropertyList {
    public static var bridge: Defaults.PropertyListCodableBridge<Self> { .init() }
}

extension DefaultsSerializable where Self: RawRepresentable, RawValue: DefaultsSerializable {
    public static var bridge: Defaults.RawRepresentableBridge<Self> { .init() }
}

extension DefaultsSerializable where Self: Codable & RawRepresentable, RawValue: DefaultsSerializable {
    public static var bridge: Defaults.CodableBridge<Self> { .init() }
}

extension DefaultsSerializable
where Self: Codable & DefaultsPreferPropertyList & RawRepresentable, RawValue: DefaultsSerializable {
    public static var bridge: Defaults.PropertyListCodableBridge<Self> { .init() }
}

extension DefaultsSerializable
where Self: Codable & DefaultsPreferRawRepresentable, RawValue: DefaultsSerializable {
    public static var bridge: Defaults.RawRepresentableBridge<Self> { .init() }
}

extension DefaultsSerializable where Self: NSObject & NSSecureCoding {
    public static var bridge: Defaults.NSSecureCodingBridge<Self> { .init() }
}

extension DefaultsSerializable where Self: Codable & NSObject & NSSecureCoding {
    public static var bridge: Defaults.CodableBridge<Self> { .init() }
}

extension DefaultsSerializable where Self: Codable & NSObject & NSSecureCoding & DefaultsPreferNSSecureCoding {
    public static var bridge: Defaults.NSSecureCodingBridge<Self> { .init() }
}

extension DefaultsCollectionSerializable where Element: DefaultsSerializable {
    public static var bridge: Defaults.CollectionBridge<Self> { .init() }
}

extension DefaultsSetAlgebraSerializable where Element: DefaultsSerializable & Hashable {
    public static var bridge: Defaults.SetAlgebraBridge<Self> { .init() }
}
