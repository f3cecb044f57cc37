import DefaultsPropertyList

extension Defaults {
    /// The values of a schema's keys at one moment: immutable, `Sendable` and `Equatable`, so it
    /// can live in value-type app state and be compared to skip work when nothing changed.
    ///
    /// ```swift
    /// let store = Defaults.SnapshotStore(AudioSettings())
    /// let snapshot = store.snapshot
    /// snapshot.volume          // Int, as the key's value was when the snapshot was taken
    /// snapshot[\.isMuted]      // the same, by key path
    ///
    /// struct PlayerState: Equatable {
    ///     var settings: Defaults.Snapshot<AudioSettings>
    ///     var isPlaying = false
    /// }
    /// ```
    ///
    /// A snapshot holds the stored objects and decodes a value when it is read (with the key's
    /// decode cache), so a change made after it was taken never shows through. Two snapshots are
    /// equal when they hold the same keys with the same stored values.
    @dynamicMemberLookup
    public struct Snapshot<Schema: SnapshotSchema>: Sendable, Hashable {
        let layout: SnapshotLayout<Schema>
        let objects: [StoredObject]

        init(layout: SnapshotLayout<Schema>, objects: [StoredObject]) {
            self.layout = layout
            self.objects = objects
        }

        /// The schema the snapshot was taken with.
        public var schema: Schema {
            layout.schema
        }

        /// The value of the schema's key at `keyPath` when the snapshot was taken.
        public subscript<Value>(dynamicMember keyPath: KeyPath<Schema, Key<Value>>) -> Value {
            self[keyPath]
        }

        /// The value of the schema's key at `keyPath` when the snapshot was taken.
        public subscript<Value>(_ keyPath: KeyPath<Schema, Key<Value>>) -> Value {
            let (key, position) = layout.key(at: keyPath)
            guard let position else {
                return Defaults[key]
            }
            return key.value(fromStored: objects[position].object)
        }

        /// The stored object of the key at `position`, for a draft.
        func object(at position: Int) -> Any? {
            objects[position].object
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            (lhs.layout === rhs.layout || lhs.layout.keys == rhs.layout.keys)
                && lhs.objects.count == rhs.objects.count
                && zip(lhs.objects, rhs.objects).allSatisfy { $0.isSameValue(as: $1) }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(layout.keys)
            for stored in objects {
                hasher.combine(stored.value)
            }
        }
    }
}
