extension Defaults {
    /// A change to a key, as ``Defaults/observe(_:options:handler:)``, ``Defaults/changes(_:initial:)``
    /// and the publishers report it.
    ///
    /// Both values are what a read of the key returns: the stored value, or the default value when
    /// nothing (or nothing of the right type) is stored. An optional key that is reset reports
    /// `nil`; a key with a dynamic default reports the default computed when the change is delivered.
    public struct KeyChange<Value: Serializable> {
        /// The value before the change: the `newValue` of the previous notification of the same
        /// observation. For the initial notification, the current value.
        public let oldValue: Value
        /// The value after the change.
        public let newValue: Value
        /// Whether this is the initial notification (asked for with ``ObservationOption/initial``,
        /// or the first element of ``Defaults/changes(_:initial:)``) rather than a change.
        public let isInitial: Bool
    }
}

extension Defaults.KeyChange: Sendable where Value: Sendable {}
extension Defaults.KeyChange: Equatable where Value: Equatable {}
