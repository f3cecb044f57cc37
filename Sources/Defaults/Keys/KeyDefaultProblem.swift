extension Defaults {
    /// A key whose default value is outside the values it allows (its `range:` or `choices:`): a
    /// programming error, reported when the key is declared.
    ///
    /// It is logged as a warning and listed in ``KeyRegistry/defaultValueProblems``, so that a test
    /// of the app can find it; the key works all the same, and reads return the default as
    /// declared.
    public struct KeyDefaultProblem: Sendable, Hashable, CustomStringConvertible {
        /// The key's declaration.
        public let declaration: KeyDeclaration
        /// The default value, as `String(describing:)` prints it.
        public let defaultValue: String
        /// The values the key allows, as declared (`8...72`, `["light", "dark"]`).
        public let allowedValues: String

        public var description: String {
            "The default value \(defaultValue) of \(declaration) is not among the values it allows, "
                + "\(allowedValues). Change the default or the allowed values."
        }
    }
}
