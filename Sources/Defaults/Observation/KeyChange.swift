extension Defaults {
    /// A change to a key, as ``Defaults/observe(_:options:handler:)`` and the publishers report it.
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
        /// Whether this is the initial notification (asked for with ``ObservationOption/initial``)
        /// rather than a change.
        public let isInitial: Bool

        /// The change in swift-user-defaults' terms: `.initial(newValue)` or `.update(newValue)`.
        public var change: Change<Value> {
            isInitial ? .initial(newValue) : .update(newValue)
        }
    }

    /// A value of a key, marked as the initial value or an update, as swift-user-defaults' `Change`.
    ///
    /// ``Defaults/changes(_:initial:)`` yields these, and ``KeyChange/change`` gives one for a
    /// callback. Use ``value`` when the difference does not matter.
    public enum Change<Value> {
        /// The value the observation started with.
        case initial(Value)
        /// A value the key changed to.
        case update(Value)

        /// The value, whichever case this is.
        public var value: Value {
            switch self {
            case .initial(let value), .update(let value): value
            }
        }

        /// Whether this is the initial value.
        public var isInitial: Bool {
            if case .initial = self { return true }
            return false
        }
    }
}

extension Defaults.KeyChange: Sendable where Value: Sendable {}
extension Defaults.KeyChange: Equatable where Value: Equatable {}
extension Defaults.Change: Sendable where Value: Sendable {}
extension Defaults.Change: Equatable where Value: Equatable {}
extension Defaults.Change: Hashable where Value: Hashable {}
