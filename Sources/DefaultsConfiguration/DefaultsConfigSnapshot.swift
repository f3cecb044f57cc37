public import Configuration
import DefaultsPropertyList
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
public struct DefaultsConfigSnapshot: ConfigSnapshot, Sendable {
    /// The suite's stored values when the snapshot was taken, by domain, highest precedence
    /// first: the administrator's enforced values, the user's, the vendor's defaults.
    let layers: [[String: PropertyListValue]]

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
        // The first domain that holds the key, in either spelling (`http = { timeout = 5; }` or
        // `"http.timeout" = 5`), answers it: a managed value wins over the user's, whichever
        // spelling each uses.
        let found = layers.lazy.compactMap { values in
            Self.value(at: key.components, in: values) ?? values[encodedKey]
        }.first
        guard let stored = found else {
            return LookupResult(encodedKey: encodedKey, value: nil)
        }
        if case .dictionary = stored {
            return LookupResult(encodedKey: encodedKey, value: nil)
        }
        guard let content = Self.content(of: stored, as: type) else {
            throw .valueNotConvertible(key: encodedKey, type: type)
        }
        let isSecret = secretsSpecifier.isSecret(key: encodedKey, value: content.payload)
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: isSecret))
    }

    /// The value at the end of a path through nested dictionaries.
    private static func value(at path: [String], in values: [String: PropertyListValue]) -> PropertyListValue? {
        guard let first = path.first else { return nil }
        var value = values[first]
        for component in path.dropFirst() {
            value = value?[component]
        }
        return value
    }

    // MARK: Conversions

    static func content(of value: PropertyListValue, as type: ConfigType) -> ConfigContent? {
        switch type {
        case .string: string(value).map(ConfigContent.string)
        case .int: int(value).map(ConfigContent.int)
        case .double: double(value).map(ConfigContent.double)
        case .bool: bool(value).map(ConfigContent.bool)
        case .bytes: bytes(value).map(ConfigContent.bytes)
        case .stringArray: array(value, string).map(ConfigContent.stringArray)
        case .intArray: array(value, int).map(ConfigContent.intArray)
        case .doubleArray: array(value, double).map(ConfigContent.doubleArray)
        case .boolArray: array(value, bool).map(ConfigContent.boolArray)
        case .byteChunkArray: array(value, bytes).map(ConfigContent.byteChunkArray)
        }
    }

    private static func array<Element>(
        _ value: PropertyListValue, _ element: (PropertyListValue) -> Element?
    ) -> [Element]? {
        guard case .array(let array) = value else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for item in array {
            guard let converted = element(item) else { return nil }
            elements.append(converted)
        }
        return elements
    }

    private static func string(_ value: PropertyListValue) -> String? {
        guard case .string(let string) = value else { return nil }
        return string
    }

    private static func bytes(_ value: PropertyListValue) -> [UInt8]? {
        guard case .data(let data) = value else { return nil }
        return [UInt8](data)
    }

    private static func int(_ value: PropertyListValue) -> Int? {
        switch value {
        case .boolean(let value): value ? 1 : 0
        case .integer(let value): value
        case .unsignedInteger(let value): Int(exactly: value)
        case .real(let value): Int(exactly: value)
        default: nil
        }
    }

    private static func double(_ value: PropertyListValue) -> Double? {
        switch value {
        case .boolean(let value): value ? 1 : 0
        case .integer(let value): Double(exactly: value)
        case .unsignedInteger(let value): Double(exactly: value)
        case .real(let value): value
        default: nil
        }
    }

    private static func bool(_ value: PropertyListValue) -> Bool? {
        switch value {
        case .boolean(let value): value
        case .integer(let value): value != 0
        case .unsignedInteger(let value): value != 0
        case .real(let value): value != 0
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

/// The former name of ``DefaultsConfigSnapshot``, which said "snapshot" as
/// `Defaults.Snapshot` does for another thing.
@available(*, deprecated, renamed: "DefaultsConfigSnapshot")
public typealias DefaultsSnapshot = DefaultsConfigSnapshot
