import Foundation

extension Defaults.Key {
    /// The same key (name, default value, value type) in another suite.
    ///
    /// Use it to point settings at a test's ``InMemorySuite`` or a second account's suite without
    /// declaring the keys again:
    ///
    /// ```swift
    /// let testSuite = InMemorySuite()
    /// Defaults[.volume.in(testSuite)] = 3    // Defaults[.volume] is unchanged
    /// ```
    ///
    /// A static default value is registered with `suite`, as for any new key. Returns this key
    /// when it already belongs to `suite`. The returned key reports the original declaration to
    /// ``Defaults/KeyRegistry``.
    public func `in`(_ suite: any DefaultsSuite) -> Defaults.Key<Value> {
        if suite === self.suite {
            return self
        }
        let site = declarationSite
        if isDefaultValueDynamic {
            return Defaults.Key(
                name, suite: suite, file: site.file, line: site.line, default: DynamicDefault(key: self).value)
        }
        return Defaults.Key(name, default: defaultValue, suite: suite, file: site.file, line: site.line)
    }

    /// The same key in a `UserDefaults` suite; see ``in(_:)-(DefaultsSuite)``.
    public func `in`(_ userDefaults: UserDefaults) -> Defaults.Key<Value> {
        self.in(UserDefaultsSuite.shared(userDefaults))
    }
}

/// The dynamic default of a key, for the same key in another suite.
///
/// A method of a `Sendable` value rather than a closure written in the generic method above, so
/// that no closure captures the metatype of a `Value` that need not be `Sendable`.
private struct DynamicDefault<Value: Defaults.Serializable>: Sendable {
    let key: Defaults.Key<Value>

    func value() -> Value {
        key.defaultValue
    }
}

/// A key that can be moved to another suite without knowing its value type: how a schema's
/// type-erased keys are pointed at another suite.
protocol SuiteRetargetableKey: Defaults.Keys {
    func retargeted(to suite: any DefaultsSuite) -> Defaults.Keys
}

extension Defaults.Key: SuiteRetargetableKey {
    func retargeted(to suite: any DefaultsSuite) -> Defaults.Keys {
        self.in(suite)
    }
}
