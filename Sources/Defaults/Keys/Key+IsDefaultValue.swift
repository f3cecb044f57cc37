extension Defaults.Key where Value: Equatable {
    /// Whether the value a read returns now equals the default value, as in Defaults.
    ///
    /// ```swift
    /// if Defaults.Keys.quality.isDefaultValue { … }
    /// ```
    ///
    /// A value stored equal to the default counts as the default; a dynamic default is computed
    /// once for the comparison.
    public var isDefaultValue: Bool {
        value(in: suite) == defaultValue
    }
}
