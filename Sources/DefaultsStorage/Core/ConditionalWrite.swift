import DefaultsPropertyList

/// A value to store where the key still holds the value its writer decided on: a write made
/// since is newer, and is kept. Values from another machine arrive so (the sync engine decides
/// without the suite's lock), and so are values a persisting write could not store put back.
package struct ConditionalWrite: Sendable {
    package var key: String
    /// The persistent value the writer saw; the write is skipped if the key holds another.
    package var expected: PropertyListValue?
    /// The value to store; `nil` removes it.
    package var value: PropertyListValue?

    package init(key: String, expected: PropertyListValue?, value: PropertyListValue?) {
        self.key = key
        self.expected = expected
        self.value = value
    }
}

extension DefaultsSuite {
    /// Stores each write whose key still holds its `expected` value, posts the keys whose read
    /// value changed with `origin`, and returns the keys it stored. A suite of this library
    /// applies them as one edit (``SuiteEdit/conditional(_:origin:)``); a suite of the
    /// application's own is checked and then written, without its lock between the two.
    package func applyConditionally(_ writes: [ConditionalWrite], origin: SuiteChange.Origin) -> Set<String> {
        if let suite = backend.storeBacked {
            return suite.edit(.conditional(writes, origin: origin)).stored
        }
        let persistent = persistentStoredValues()
        let applied = writes.filter { persistent[$0.key] == $0.expected }
        postingChanges(of: applied.map(\.key), origin: origin) {
            StorageEnvironment.withoutPropagation {
                for write in applied {
                    set(write.value?.object, forKey: write.key)
                }
            }
        }
        return Set(applied.map(\.key))
    }
}
