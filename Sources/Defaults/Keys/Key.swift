import Foundation
import Synchronization

extension Defaults {
    /// A typed key: a name, a default value and the suite that holds the value.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let quality = Key<Double>("quality", default: 0.8)
    ///     static let name = Key<String?>("name")                   // default: nil
    ///     static let launchedAt = Key<Date>("launchedAt") { .now }  // dynamic default
    /// }
    /// ```
    ///
    /// A static default value is registered with the suite, so that code reading the suite
    /// directly sees it too. A dynamic default is evaluated on each read of a missing value and
    /// not registered.
    public final class Key<Value: Serializable>: Keys, @unchecked Sendable {
        private enum DefaultSource {
            case value(Value)
            case dynamic(@Sendable () -> Value)
        }

        private let defaultSource: DefaultSource
        private let decodeCache: DecodeCache<Value>?

        /// The value a read returns when nothing usable is stored.
        public var defaultValue: Value {
            switch defaultSource {
            case .value(let value): value
            case .dynamic(let makeValue): makeValue()
            }
        }

        /// Whether the default value is computed on each read instead of fixed.
        public var isDefaultValueDynamic: Bool {
            if case .dynamic = defaultSource { return true }
            return false
        }

        /// Creates a key with a static default value, registered with `suite`.
        ///
        /// - Precondition: `name` is ASCII, does not start with `@` and has no `.`.
        public init(_ name: String, default defaultValue: Value, suite: any DefaultsSuite = Defaults.standardSuite) {
            defaultSource = .value(defaultValue)
            decodeCache = DecodeCache()
            super.init(name: name, suite: suite)
            if let object = Value.bridge.serialize(defaultValue) {
                suite.register(defaults: [name: object])
            }
        }

        /// Creates a key whose default value is computed on each read of a missing value.
        public init(
            _ name: String,
            suite: any DefaultsSuite = Defaults.standardSuite,
            default defaultValueGetter: @escaping @Sendable () -> Value
        ) {
            defaultSource = .dynamic(defaultValueGetter)
            decodeCache = DecodeCache()
            super.init(name: name, suite: suite)
        }

        /// Creates a key with a static default value in a `UserDefaults` suite.
        public convenience init(_ name: String, default defaultValue: Value, suite: UserDefaults) {
            self.init(name, default: defaultValue, suite: UserDefaultsSuite.shared(suite))
        }

        /// Creates a key with a dynamic default value in a `UserDefaults` suite.
        public convenience init(
            _ name: String,
            suite: UserDefaults,
            default defaultValueGetter: @escaping @Sendable () -> Value
        ) {
            self.init(name, suite: UserDefaultsSuite.shared(suite), default: defaultValueGetter)
        }

        /// Decodes a stored property-list object; `nil` if it is not a `Value`.
        func decode(_ object: Any) -> Value? {
            guard let decodeCache else {
                return Value.bridge.deserialize(object as? Value.Serializable)
            }
            return decodeCache.value(for: object) {
                Value.bridge.deserialize(object as? Value.Serializable)
            }
        }

        /// The value of this key in `suite`: what is stored if it decodes, else the default.
        func value(in suite: some DefaultsSuite) -> Value {
            if let object = suite.object(forKey: name), let value = decode(object) {
                return value
            }
            return defaultValue
        }

        /// Stores `value` in `suite`; `nil` (for an optional key) removes the stored value.
        ///
        /// A value that cannot be serialized is reported and leaves the stored value unchanged.
        func store(_ value: Value, in suite: some DefaultsSuite) {
            if let optional = value as? any OptionalProtocol, optional.isNil {
                suite.set(nil, forKey: name)
            } else if let object = Value.bridge.serialize(value) {
                suite.set(object, forKey: name)
            } else {
                Defaults.logger.error(
                    "The value for key could not be serialized; the stored value is unchanged",
                    metadata: ["key": "\(name)", "type": "\(Value.self)", "suite": "\(suite.name)"]
                )
            }
        }
    }
}

extension Defaults.Key {
    /// Creates an optional key whose default value is `nil`.
    public convenience init<Wrapped>(_ name: String, suite: any DefaultsSuite = Defaults.standardSuite)
    where Value == Wrapped? {
        self.init(name, default: nil, suite: suite)
    }

    /// Creates an optional key in a `UserDefaults` suite whose default value is `nil`.
    public convenience init<Wrapped>(_ name: String, suite: UserDefaults) where Value == Wrapped? {
        self.init(name, default: nil, suite: UserDefaultsSuite.shared(suite))
    }
}
