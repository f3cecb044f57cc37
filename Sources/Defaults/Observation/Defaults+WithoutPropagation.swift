extension Defaults {
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
    /// No `observe` handler, `updates` sequence or publisher of this process hears about the
    /// changes; an observer's next notification reports, as its old value, the last value it was
    /// given. The changes are stored and flushed as usual; other processes still see them. The
    /// suppression applies to the code the closure runs on the calling thread (it is a task-local
    /// value), not to changes other threads make meanwhile.
    public static func withoutPropagation<Result>(_ closure: () throws -> Result) rethrows -> Result {
        try StorageEnvironment.withoutPropagation(closure)
    }
}
