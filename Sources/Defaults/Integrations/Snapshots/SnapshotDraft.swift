extension Defaults {
    /// The values a ``SnapshotStore/write(_:)`` block changes: read and assign the schema's keys
    /// as properties; nothing is stored until the block returns.
    ///
    /// ```swift
    /// try store.write { draft in
    ///     draft.volume += 1
    ///     draft.device = nil
    /// }
    /// ```
    ///
    /// A read returns the value assigned in this draft, or else the value the transaction started
    /// from (``base``).
    @dynamicMemberLookup
    public struct SnapshotDraft<Schema: SnapshotSchema> {
        /// The values when the transaction started.
        public let base: Snapshot<Schema>
        /// New stored objects by position (`nil` removes), in the order first assigned.
        private(set) var changes: [(position: Int, object: Any?)] = []
        /// Values that could not be serialized.
        private(set) var failures: [DefaultsError] = []

        init(base: Snapshot<Schema>) {
            self.base = base
        }

        /// The value of the schema's key at `keyPath`: as assigned in this draft, or as it was.
        public subscript<Value>(dynamicMember keyPath: KeyPath<Schema, Key<Value>>) -> Value {
            get {
                let (key, position) = base.layout.key(at: keyPath)
                guard let position else { return base[keyPath] }
                if let change = changes.last(where: { $0.position == position }) {
                    return key.value(fromStored: change.object)
                }
                return key.value(fromStored: base.object(at: position))
            }
            set {
                let (key, position) = base.layout.key(at: keyPath)
                guard let position else {
                    failures.append(
                        .unserializable(key: key.name, valueType: Value.self, reason: "the key is not in the schema"))
                    return
                }
                let object: Any?
                if let optional = newValue as? any OptionalProtocol, optional.isNil {
                    object = nil
                } else if let serialized = Value.storedForm(of: newValue) {
                    object = serialized
                } else {
                    failures.append(
                        .unserializable(
                            key: key.name, valueType: Value.self, reason: "its bridge could not serialize it"))
                    return
                }
                if let index = changes.firstIndex(where: { $0.position == position }) {
                    changes[index].object = object
                } else {
                    changes.append((position, object))
                }
            }
        }
    }
}
