extension Defaults {
    /// Makes every value written so far in this process durable, in every suite.
    ///
    /// Pending writes are also flushed at normal process exit; call this before an exit the
    /// library cannot see, such as `_exit` or from your own signal handler.
    ///
    /// - Throws: ``DefaultsError``: the suite's error when one suite could not be flushed, or a
    ///   ``DefaultsError/Kind/multiple`` error with each suite's error in
    ///   ``DefaultsError/causes``. The other suites are flushed.
    public static func flushAll() throws(DefaultsError) {
        let errors = SuiteRegistry.flushAll()
        if !errors.isEmpty {
            throw DefaultsError(combining: errors, message: "\(errors.count) suites could not be flushed")
        }
    }
}
