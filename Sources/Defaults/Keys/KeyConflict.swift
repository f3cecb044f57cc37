extension Defaults {
    /// Keys that share a stored name in one suite but not a value type: each would read the other's
    /// value as invalid and fall back to its default, and each write would destroy the other's value.
    ///
    /// ``KeyRegistry`` finds them as keys are created; ``description`` names every declaration
    /// involved.
    public struct KeyConflict: Sendable, Hashable, CustomStringConvertible {
        /// The stored name the keys share.
        public let name: String
        /// The name of the suite they share.
        public let suiteName: String
        /// The declarations involved, one per value type, in the order they were made.
        public let declarations: [KeyDeclaration]

        public var description: String {
            let list = declarations.map(\.description)
            let named = list.count == 2 ? "\(list[0]) and \(list[1])" : list.joined(separator: ", ")
            return "The key name \"\(name)\" is used in suite \"\(suiteName)\" with different value types: "
                + "\(named). Each would overwrite the other's value. Give the keys different names, "
                + "or declare them in key groups with different namespaces (Defaults.KeyGroup)."
        }
    }
}
