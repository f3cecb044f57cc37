extension Defaults {
    /// The keys a ``Snapshot`` holds: a type whose stored properties are keys, as
    /// UserDefaultsSnapshot's schema objects list their properties.
    ///
    /// ```swift
    /// struct AudioSettings: Defaults.SnapshotSchema {
    ///     var volume = Defaults.Keys.volume                            // Key<Int>
    ///     var isMuted = Defaults.Key<Bool>("isMuted", default: false)
    ///     var device = Defaults.Key<String?>("device")
    /// }
    /// ```
    ///
    /// A schema is only a list of keys: it owns no values and adds no namespace, so the same keys
    /// can be read with `Defaults[…]` anywhere else, and several schemas can share keys.
    public protocol SnapshotSchema: Sendable {
        /// The keys of the schema. Unless given, every stored property whose value is a key, found
        /// by reflection; give it yourself when the keys are computed properties.
        var schemaKeys: [Defaults.Keys] { get }
    }
}

extension Defaults.SnapshotSchema {
    /// Every stored property of the schema whose value is a ``Defaults/Key``.
    public var schemaKeys: [Defaults.Keys] {
        Mirror(reflecting: self).children.compactMap { $0.value as? Defaults.Keys }
    }
}
