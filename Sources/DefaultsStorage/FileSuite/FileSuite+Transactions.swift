import DefaultsPropertyList

extension FileSuite {
    /// Applies every change under one lock, so that no reader sees some without the others,
    /// schedules one file write for them all and posts one change event.
    ///
    /// A value that is not a property-list object is reported and nothing is changed.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        write(changes)
    }
}
