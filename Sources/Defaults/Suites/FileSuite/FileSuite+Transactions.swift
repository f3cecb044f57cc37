import DefaultsPropertyList

extension FileSuite {
    /// Applies every change under one lock, so that no reader sees some without the others,
    /// schedules one file write for them all and posts one change event.
    ///
    /// A value that is not a property-list object is reported and nothing is changed.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        let changes = withoutManagedKeys(changes)
        var values: [(key: String, value: PropertyListValue?)] = []
        values.reserveCapacity(changes.count)
        for (key, object) in changes {
            guard let object else {
                values.append((key, nil))
                continue
            }
            guard let value = PropertyListValue.from(object) else {
                report(
                    DefaultsError(
                        suite: name, kind: .unsupportedValue, key: key, fileURL: fileURL,
                        message: "the value for key \"\(key)\" of type \(type(of: object)) is not a property-list "
                            + "object; none of the \(changes.count) values written together was stored"
                    )
                )
                return
            }
            values.append((key, value))
        }
        let keys = state.withLock { state in
            for (key, value) in values {
                state.pending.record(value, forKey: key)
            }
            return state.domains.setPersistent(values)
        }
        writes.writeLater(self)
        self.changes.post(SuiteChange(keys: keys))
    }
}
