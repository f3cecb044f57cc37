import DefaultsPropertyList

/// A value another machine wrote, to store where the key still holds what the sync engine saw
/// when it decided to apply it: a local write made since is newer, and is kept.
package struct SyncedWrite: Sendable {
    var key: String
    /// The persistent value the engine compared; the write is skipped if the key holds another.
    var expected: PropertyListValue?
    /// The value to store; `nil` removes it.
    var value: PropertyListValue?
}

extension DefaultsSuite {
    /// Stores each write whose key still holds its `expected` value, posts the keys whose read
    /// value changed with the origin ``SuiteChange/Origin/sync``, and returns the keys it stored.
    /// A suite of this library applies them as one edit (``SuiteEdit/synced(_:)``); a suite of the
    /// application's own is checked and then written, without its lock between the two.
    func applySyncedWrites(_ writes: [SyncedWrite]) -> Set<String> {
        if let suite = self as? any StoreBackedSuite {
            return suite.edit(.synced(writes)).stored
        }
        let persistent = persistentStoredValues()
        let applied = writes.filter { persistent[$0.key] == $0.expected }
        var old: [String: PropertyListValue?] = [:]
        for write in applied {
            old[write.key] = .some(storedValue(forKey: write.key))
        }
        Defaults.withoutPropagation {
            for write in applied {
                set(write.value?.object, forKey: write.key)
            }
        }
        let changed = old.keys.filter { (old[$0] ?? nil) != storedValue(forKey: $0) }
        changes.post(SuiteChange(keys: Set(changed), origin: .sync))
        return Set(applied.map(\.key))
    }
}
