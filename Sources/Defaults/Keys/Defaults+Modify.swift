extension Defaults {
    /// Changes the value of `key` in place, as one step: for a ``FileSuite``, no other process or
    /// thread writes the key between the read and the write, so concurrent increments are all kept.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let launchCount = Key<Int>("launchCount", default: 0)
    /// }
    ///
    /// Defaults.modify(.launchCount) { $0 += 1 }
    /// ```
    ///
    /// `Defaults[.launchCount] += 1` is a read and a separate write: two processes doing it at once
    /// can both read 5 and both write 6. `modify` holds the suite's cross-process lock from the
    /// read (of the file as other processes left it) to the write, which is on disk when it
    /// returns. Other suites read, call `body` and write.
    ///
    /// `body` may read and write other keys, but must not flush the suite or modify it again.
    /// When `body` throws, nothing is stored and the error is rethrown. A value that cannot be
    /// serialized is reported and leaves the stored value unchanged; assigning `nil` to an optional
    /// key removes the stored value.
    ///
    /// - Returns: What `body` returns.
    @discardableResult
    public static func modify<Value: Serializable, Result, Failure: Error>(
        _ key: Key<Value>, _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var isUnserializable = false
        let result = try key.suite.modify(forKey: key.name) { (object: inout Any?) throws(Failure) -> Result in
            var value = key.value(fromStored: object)
            let result = try body(&value)
            if let optional = value as? any OptionalProtocol, optional.isNil {
                object = nil
            } else if let serialized = Value.storedForm(of: value) {
                object = serialized
            } else {
                isUnserializable = true
            }
            return result
        }
        // Logged once the suite's locks are released, so that a log handler may use the suite.
        if isUnserializable {
            key.reportUnserializable(in: key.suite)
        }
        return result
    }
}
