import DefaultsPropertyList

extension FileSuite {
    /// Applies every change under one lock, so that no reader sees some without the others,
    /// schedules one file write for them all and posts one change event.
    ///
    /// A value that is not a property-list object is reported and nothing is changed.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        write(changes)
    }

    package func apply(_ values: some Collection<(key: String, value: PropertyListValue?)>) {
        let applied = applyPersistent(Array(values))
        for key in applied.managed {
            reportManagedWrite(key)
        }
        writes.writeLater(self)
        self.changes.post(SuiteChange(keys: applied.changed))
    }

    /// Applies a write of this process under the state lock, as one change
    /// (``SuiteDomains/write(_:tellsChanges:changed:)``): keys the administrator enforces are left
    /// out, and returned for the caller to report once no lock is held; the others are recorded
    /// as pending. Returns the keys whose read value changed.
    func applyPersistent(_ values: [(key: String, value: PropertyListValue?)]) -> (
        changed: Set<String>, managed: [String]
    ) {
        state.withLock { state in
            var changed = Set<String>()
            let managed = state.domains.write(values) { changed.insert($0) }
            for (key, value) in values where !managed.contains(key) {
                state.pending.record(value, forKey: key)
            }
            return (changed, managed)
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
