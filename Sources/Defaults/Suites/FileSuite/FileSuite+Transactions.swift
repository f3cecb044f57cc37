import DefaultsPropertyList

extension FileSuite {
    /// Applies every change under one lock, so that no reader sees some without the others,
    /// schedules one file write for them all and posts one change event.
    ///
    /// A value that is not a property-list object is reported and nothing is changed.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
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
        let applied = applyPersistent(values)
        for key in applied.managed {
            reportManagedWrite(key)
        }
        writes.writeLater(self)
        self.changes.post(SuiteChange(keys: applied.changed))
    }

    /// The one place persistent values change by a write of this process (``set(_:forKey:)``
    /// keeps an inlined copy of it for speed, for a single key): under the state lock, as one
    /// change, keys the administrator enforces are left out, and returned for the caller to
    /// report once no lock is held; the others are recorded as pending. Returns the keys whose
    /// read value changed.
    func applyPersistent(_ values: [(key: String, value: PropertyListValue?)]) -> (
        changed: Set<String>, managed: [String]
    ) {
        state.withLock { state in
            var applied = values
            var managed: [String] = []
            if !state.domains.managed.isEmpty {
                managed = values.map(\.key).filter { state.domains.managed[$0] != nil }
                applied = values.filter { state.domains.managed[$0.key] == nil }
            }
            for (key, value) in applied {
                state.pending.record(value, forKey: key)
            }
            return (state.domains.setPersistent(applied), managed)
        }
    }
}

extension FileSuite: SyncedWriteSuite {
    func applySynced(_ syncedWrites: [SyncedWrite]) -> Set<String> {
        let (stored, changed) = state.withLock { state in
            let applied = state.domains.applySynced(syncedWrites)
            for (key, value) in applied.stored {
                state.pending.record(value, forKey: key)
            }
            return (Set(applied.stored.map(\.key)), applied.changed)
        }
        if !stored.isEmpty {
            writes.writeLater(self)
        }
        changes.post(SuiteChange(keys: changed, origin: .sync))
        return stored
    }
}
