extension FileSuite {
    /// Applies every change under one lock, so that no reader sees some without the others,
    /// schedules one file write for them all and posts one change event.
    ///
    /// A value that is not a property-list object is reported and nothing is changed.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        let changes = withoutManagedKeys(changes)
        var normalized: [(key: String, object: Any?)] = []
        normalized.reserveCapacity(changes.count)
        for (key, object) in changes {
            guard let object else {
                normalized.append((key, nil))
                continue
            }
            guard let value = Self.propertyListObject(object) else {
                report(
                    DefaultsError(
                        suite: name, kind: .unsupportedValue, key: key, fileURL: fileURL,
                        message: "the value for key \"\(key)\" of type \(type(of: object)) is not a property-list "
                            + "object; none of the \(changes.count) values written together was stored"
                    )
                )
                return
            }
            normalized.append((key, value))
        }
        let sent = PropertyListValues(normalized)
        let keys = state.withLock { state in
            for (key, object) in sent.values {
                state.pending.record(object, forKey: key)
            }
            return state.domains.setPersistent(sent.values)
        }
        writes.writeLater(self)
        self.changes.post(SuiteChange(keys: keys))
    }
}
