import Foundation

extension Defaults {
    /// The keys of your app: extend it with `static let` keys, and the type-erased base of every key.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let isUnicornMode = Key<Bool>("isUnicornMode", default: false)
    /// }
    /// ```
    ///
    /// Keys are immutable after creation, which is what makes sharing them between threads safe.
    public class Keys: @unchecked Sendable {
        // `@unchecked`: the compiler checks only final classes; a key's stored properties are
        // immutable `let`s of Sendable types.
        /// A typed key; written `Key<Value>` inside `extension Defaults.Keys`.
        public typealias Key<Value: Defaults.Serializable> = Defaults.Key<Value>

        /// The name the value is stored under.
        public let name: String
        /// The suite that holds the value.
        public let suite: any DefaultsSuite

        init(name: String, suite: any DefaultsSuite) {
            // Defaults warns and goes on; so do we: a program whose key names break the rules
            // still works, and the warning says what to fix.
            if let problem = Defaults.KeyNameProblem(name) {
                Defaults.KeyRegistry.record(problem, suiteName: suite.name)
            }
            self.name = name
            self.suite = suite
        }

        /// Removes the stored value, so that reads return the default value again.
        public func reset() {
            suite.set(nil, forKey: name)
        }
    }
}

extension Defaults.Keys: Hashable {
    public static func == (lhs: Defaults.Keys, rhs: Defaults.Keys) -> Bool {
        lhs.name == rhs.name && lhs.suite === rhs.suite
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(ObjectIdentifier(suite))
    }
}
