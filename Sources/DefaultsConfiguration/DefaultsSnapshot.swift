public import Configuration
import Foundation

/// The values of a suite at one moment, as a swift-configuration snapshot.
///
/// Values convert as swift-configuration's property-list file provider converts them:
///
/// | Requested      | Stored value that converts                                          |
/// |----------------|---------------------------------------------------------------------|
/// | `string`       | a string                                                            |
/// | `int`          | an integer, a Boolean (`0`, `1`), a double with no fractional part  |
/// | `double`       | a double, an integer, a Boolean (`0`, `1`)                          |
/// | `bool`         | a Boolean, a number (`true` when not zero)                          |
/// | `bytes`        | data                                                                |
/// | arrays         | an array whose elements all convert, an empty array                 |
///
/// Anything else, dates among them, throws ``DefaultsProviderError/valueNotConvertible(key:type:)``.
/// A key with no value, or whose value is a dictionary, is not found (`nil`), as in a file
/// provider, where a dictionary only holds other keys.
public struct DefaultsSnapshot: ConfigSnapshot, @unchecked Sendable {
    // `@unchecked Sendable`: `values` holds only property-list objects, immutable values.

    /// The suite's persistent values when the snapshot was taken.
    let values: [String: Any]

    public let providerName: String

    let secretsSpecifier: SecretsSpecifier<String, any Sendable>

    /// The value of `key`, converted to `type`.
    ///
    /// - Throws: ``DefaultsProviderError`` when the stored value cannot be converted to `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try lookup(key, type: type)
    }

    func lookup(_ key: AbsoluteConfigKey, type: ConfigType) throws(DefaultsProviderError) -> LookupResult {
        let encodedKey = key.components.joined(separator: ".")
        guard let stored = object(at: key.components) ?? values[encodedKey], !(stored is [String: Any]) else {
            return LookupResult(encodedKey: encodedKey, value: nil)
        }
        guard let content = Self.content(of: stored, as: type) else {
            throw .valueNotConvertible(key: encodedKey, type: type)
        }
        let isSecret = secretsSpecifier.isSecret(key: encodedKey, value: content.payload)
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: isSecret))
    }

    /// The value at the end of a path through nested dictionaries.
    private func object(at path: [String]) -> Any? {
        guard let first = path.first else { return nil }
        var object: Any? = values[first]
        for component in path.dropFirst() {
            object = (object as? [String: Any])?[component]
        }
        return object
    }

    // MARK: Conversions

    static func content(of object: Any, as type: ConfigType) -> ConfigContent? {
        switch type {
        case .string: (object as? String).map(ConfigContent.string)
        case .int: int(object).map(ConfigContent.int)
        case .double: double(object).map(ConfigContent.double)
        case .bool: bool(object).map(ConfigContent.bool)
        case .bytes: (object as? Data).map { .bytes([UInt8]($0)) }
        case .stringArray: array(object) { $0 as? String }.map(ConfigContent.stringArray)
        case .intArray: array(object, int).map(ConfigContent.intArray)
        case .doubleArray: array(object, double).map(ConfigContent.doubleArray)
        case .boolArray: array(object, bool).map(ConfigContent.boolArray)
        case .byteChunkArray: array(object) { ($0 as? Data).map { [UInt8]($0) } }.map(ConfigContent.byteChunkArray)
        }
    }

    private static func array<Element>(_ object: Any, _ element: (Any) -> Element?) -> [Element]? {
        guard let array = object as? [Any] else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for item in array {
            guard let converted = element(item) else { return nil }
            elements.append(converted)
        }
        return elements
    }

    // Booleans are matched first: where Foundation bridges numbers, `1` and `true` can cast to
    // each other, and a Boolean must convert as a Boolean.
    private static func int(_ object: Any) -> Int? {
        switch object {
        case let value as Bool: value ? 1 : 0
        case let value as Int: value
        case let value as UInt64: Int(exactly: value)
        case let value as Double: Int(exactly: value)
        default: nil
        }
    }

    private static func double(_ object: Any) -> Double? {
        switch object {
        case let value as Bool: value ? 1 : 0
        case let value as Int: Double(exactly: value)
        case let value as UInt64: Double(exactly: value)
        case let value as Double: value
        default: nil
        }
    }

    private static func bool(_ object: Any) -> Bool? {
        switch object {
        case let value as Bool: value
        case let value as Int: value != 0
        case let value as UInt64: value != 0
        case let value as Double: value != 0
        default: nil
        }
    }
}

extension ConfigContent {
    /// The value inside, as a secrets specifier is given it.
    fileprivate var payload: any Sendable {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .bytes(let value): value
        case .stringArray(let value): value
        case .intArray(let value): value
        case .doubleArray(let value): value
        case .boolArray(let value): value
        case .byteChunkArray(let value): value
        }
    }
}
