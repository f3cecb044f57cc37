extension Defaults {
    @TaskLocal static var isPropagationSuppressed = false

    /// Runs `closure` without telling any observer of this process about the changes it makes.
    ///
    /// Use it to update a key from inside that key's own observer without recursing:
    ///
    /// ```swift
    /// let observation = Defaults.observe(.quality) { _ in
    ///     Defaults.withoutPropagation {
    ///         Defaults[.quality] = min(Defaults[.quality], 1)
    ///     }
    /// }
    /// ```
    ///
    /// The changes are stored and flushed as usual; other processes still see them.
    public static func withoutPropagation<Result>(_ closure: () throws -> Result) rethrows -> Result {
        try $isPropagationSuppressed.withValue(true, operation: closure)
    }
}
