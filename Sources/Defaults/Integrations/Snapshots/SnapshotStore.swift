extension Defaults {
    /// Immutable snapshots of a schema's keys, transactions that change several keys at once, and
    /// a stream of new snapshots: UserDefaultsSnapshot's persistent store, on any suite.
    ///
    /// ```swift
    /// let store = Defaults.SnapshotStore(AudioSettings())
    ///
    /// try store.write { draft in
    ///     draft.volume = 3
    ///     draft.isMuted = false
    /// }
    ///
    /// let snapshot = store.snapshot   // Defaults.Snapshot<AudioSettings>
    ///
    /// for await snapshot in store.snapshots() {
    ///     render(snapshot)            // once at first, then once per change
    /// }
    /// ```
    ///
    /// Pass `suite:` to read and write the schema's keys in another suite (a test's
    /// ``InMemorySuite``, a second account) without declaring them again.
    public struct SnapshotStore<Schema: SnapshotSchema>: Sendable {
        let layout: SnapshotLayout<Schema>

        /// A store for `schema`'s keys, in their own suites or, when given, in `suite`
        /// (see ``Key/in(_:)-(DefaultsSuite)``).
        public init(_ schema: Schema, suite: (any DefaultsSuite)? = nil) {
            layout = SnapshotLayout(schema: schema, suite: suite)
        }

        /// The schema.
        public var schema: Schema {
            layout.schema
        }

        /// The keys the store reads and writes, in the suites it uses.
        public var keys: [Defaults.Keys] {
            layout.keys
        }

        /// The values of the schema's keys now.
        public var snapshot: Snapshot<Schema> {
            Snapshot(layout: layout, objects: layout.read())
        }

        /// Changes several keys as one transaction.
        ///
        /// The block reads and assigns the keys through a ``SnapshotDraft``. Nothing is stored until
        /// it returns; if it throws, or a value cannot be serialized, nothing is stored at all.
        /// Otherwise every changed value is stored at once (one ``DefaultsSuite/setValues(_:)`` per
        /// suite): observers of the keys are told once, each changed key is in that one change,
        /// ``snapshots(initial:)`` yields one snapshot, and the suite is flushed once, so the
        /// values are durable when `write` returns.
        ///
        /// Keys the block assigns are written even if another thread changed them since the
        /// transaction started (the last writer wins, as for single keys).
        ///
        /// - Returns: What the block returns.
        /// - Throws: The block's error, or a ``DefaultsError`` of kind
        ///   ``DefaultsError/Kind/unsupportedValue`` for a value that could not be serialized
        ///   (``DefaultsError/Kind/multiple`` for several); nothing is stored in either case. Or the
        ///   error of a flush that failed, after the values were applied (they stay in memory and
        ///   the suite retries, as for any write).
        @discardableResult
        public func write<Result>(_ body: (inout SnapshotDraft<Schema>) throws -> Result) throws -> Result {
            var draft = SnapshotDraft(base: snapshot)
            let result = try body(&draft)
            guard draft.failures.isEmpty else {
                var failure = DefaultsError(
                    combining: draft.failures,
                    message: "the transaction stored nothing: \(draft.failures.count) values could not be serialized")
                if failure.kind != .multiple {
                    failure.message += "; the transaction stored nothing"
                }
                throw failure
            }
            var bySuite: [ObjectIdentifier: (suite: any DefaultsSuite, changes: [(key: String, object: Any?)])] = [:]
            var order: [ObjectIdentifier] = []
            for change in draft.changes {
                let key = layout.keys[change.position]
                let id = ObjectIdentifier(key.suite)
                if bySuite[id] == nil {
                    bySuite[id] = (key.suite, [])
                    order.append(id)
                }
                bySuite[id]?.changes.append((key.name, change.object))
            }
            for id in order {
                if let group = bySuite[id] {
                    group.suite.setValues(group.changes)
                }
            }
            var flushError: (any Error)?
            for id in order {
                do {
                    try bySuite[id]?.suite.flush()
                } catch {
                    flushError = flushError ?? error
                }
            }
            if let flushError {
                throw flushError
            }
            return result
        }

        /// A new snapshot each time any of the schema's keys changes, the current one first unless
        /// `initial` is `false`.
        ///
        /// A ``write(_:)`` transaction yields one snapshot, however many keys it changed (as does a
        /// ``Defaults/removeAll(suite:)-(DefaultsSuite)``), provided the schema's keys share one suite. Each
        /// snapshot holds the values as they were right after its change. The sequence behaves as
        /// ``Defaults/Updates``: it ends when the iterating task is cancelled.
        public func snapshots(initial: Bool = true) -> Updates<Snapshot<Schema>> {
            let reader = SnapshotReader(layout: layout, observed: ObservedKeys(layout.keys))
            return Updates(keys: reader.observed, initial: initial, makeElement: reader.snapshot)
        }
    }
}

/// Turns a delivered change into a snapshot.
struct SnapshotReader<Schema: Defaults.SnapshotSchema>: Sendable {
    let layout: SnapshotLayout<Schema>
    let observed: ObservedKeys

    func snapshot(_ change: ObservedChange) -> Defaults.Snapshot<Schema> {
        Defaults.Snapshot(
            layout: layout,
            objects: layout.keys.map { observed.stored($0, in: change.new) }
        )
    }
}
