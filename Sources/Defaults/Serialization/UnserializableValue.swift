extension Defaults {
    /// A value that its bridge could not turn into a property-list object, so it was not stored
    /// (or not encoded as a launch argument).
    public struct UnserializableValue: Error, Sendable, CustomStringConvertible {
        /// The key's name.
        public let key: String
        /// The value's type, as text.
        public let valueType: String
        /// What went wrong.
        public let reason: String

        init(key: String, valueType: Any.Type, reason: String) {
            self.key = key
            self.valueType = String(reflecting: valueType)
            self.reason = reason
        }

        public var description: String {
            "the value of type \(valueType) for key \"\(key)\" cannot be serialized: \(reason)"
        }
    }
}
