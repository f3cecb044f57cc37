import Foundation

/// Typed, observable, durable settings.
///
/// Declare keys once, with their type and default value, then read and write them anywhere:
///
/// ```swift
/// extension Defaults.Keys {
///     static let quality = Key<Double>("quality", default: 0.8)
/// }
///
/// Defaults[.quality] += 0.1
/// ```
public enum Defaults {
    /// Reads or writes the value of `key` in the key's suite.
    ///
    /// A read returns the stored value, or the key's default value when nothing is stored or what
    /// is stored is not a `Value`. Assigning `nil` to an optional key removes the stored value.
    @inlinable
    public static subscript<Value: Serializable>(key: Key<Value>) -> Value {
        get { key.value(in: key.suite) }
        set { key.store(newValue, in: key.suite) }
    }

    /// Resets each key to its default value by removing what its suite stores for it.
    public static func reset(_ keys: Keys...) {
        reset(keys)
    }

    /// Resets each key to its default value by removing what its suite stores for it.
    public static func reset(_ keys: [Keys]) {
        for key in keys {
            key.reset()
        }
    }

    /// Resets keys given by name, for when keys are kept in a collection.
    public static func reset(_ keys: String..., suite: any DefaultsSuite = standardSuite) {
        reset(keys, suite: suite)
    }

    /// Resets keys given by name, for when keys are kept in a collection.
    public static func reset(_ keys: [String], suite: any DefaultsSuite = standardSuite) {
        for key in keys {
            suite.set(nil, forKey: key)
        }
    }

    /// Resets keys given by name in a `UserDefaults` suite.
    public static func reset(_ keys: String..., suite: UserDefaults) {
        reset(keys, suite: UserDefaultsSuite.shared(suite))
    }

    /// Resets keys given by name in a `UserDefaults` suite.
    public static func reset(_ keys: [String], suite: UserDefaults) {
        reset(keys, suite: UserDefaultsSuite.shared(suite))
    }

    /// Resets each typed key in its own suite, as ``reset(_:)-(Defaults.Keys...)`` does: Defaults'
    /// spelling with a `suite`, which, as in Defaults, does not change where a key is reset.
    public static func reset<each Value: Serializable>(_ keys: repeat Key<each Value>, suite: UserDefaults) {
        for key in repeat each keys {
            key.reset()
        }
    }

    /// Removes every stored value from `suite`. Registered defaults stay.
    public static func removeAll(suite: any DefaultsSuite = standardSuite) {
        suite.removeAll()
    }

    /// Removes every stored value from a `UserDefaults` suite.
    public static func removeAll(suite: UserDefaults) {
        UserDefaultsSuite.shared(suite).removeAll()
    }
}
