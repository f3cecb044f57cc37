import DefaultsPropertyList

extension Defaults {
    /// A type-erased stored value, for when one key holds values of several types:
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let magic = Key<[String: Defaults.AnySerializable]>("magic", default: [:])
    /// }
    ///
    /// Defaults[.magic]["unicorn"] = "🦄"
    /// let unicorn: String? = Defaults[.magic]["unicorn"]?.get()
    /// ```
    ///
    /// It holds the value in its stored (property-list) form and decodes it on each ``get()``, so
    /// prefer typed keys where the type is known.
    public struct AnySerializable: Serializable, Hashable, Sendable {
        /// The stored form; `nil` for a value whose bridge gives nothing to store.
        var value: PropertyListValue?

        /// The stored form as the bridges take it.
        var object: Any? { value?.object }

        public static var bridge: AnySerializableBridge { .init() }

        /// Wraps a value of any serializable type.
        public init<Value: Serializable>(_ value: Value) {
            self.value = PropertyListValue.from(Value.storedForm(of: value))
        }

        init(object: Any?) {
            value = PropertyListValue.from(object)
        }

        /// The value as a `Value`, or `nil` if it is not one.
        public func get<Value: Serializable>() -> Value? {
            object.flatMap(Value.value(fromStoredForm:))
        }

        /// The value as a `Value`, or `nil` if it is not one. Use it where the type is ambiguous.
        public func get<Value: Serializable>(_: Value.Type) -> Value? {
            get()
        }

        /// Replaces the value.
        public mutating func set<Value: Serializable>(_ newValue: Value) {
            value = PropertyListValue.from(Value.storedForm(of: newValue))
        }

        /// Replaces the value with a `Value`. Use it where the type of a literal is ambiguous:
        /// `set(12.5, type: Float.self)`.
        public mutating func set<Value: Serializable>(_ newValue: Value, type: Value.Type) {
            set(newValue)
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.value == rhs.value
        }

        public func hash(into hasher: inout Hasher) {
            if let value { hasher.combine(value) }
        }
    }

    /// The bridge of ``AnySerializable``: the value is already in stored form.
    public struct AnySerializableBridge: Bridge, Sendable {
        public typealias Value = AnySerializable
        public typealias Serializable = Any
        public init() {}
        public func serialize(_ value: AnySerializable?) -> Any? { value?.object }
        public func deserialize(_ object: Any?) -> AnySerializable? { object.map { AnySerializable(object: $0) } }
    }
}

extension Defaults.AnySerializable: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(value) }
}

extension Defaults.AnySerializable: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self.init(value) }
}

extension Defaults.AnySerializable: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self.init(value) }
}

extension Defaults.AnySerializable: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self.init(value) }
}

extension Defaults.AnySerializable: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self.init(object: nil) }
}

extension Defaults.AnySerializable: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: Defaults.AnySerializable...) { self.init(elements) }
}

extension Defaults.AnySerializable: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, Defaults.AnySerializable)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// As in Defaults, `nil` is a value with nothing to store: assigning it removes the stored value,
// so that the key reads its default again.
extension Defaults.AnySerializable: OptionalProtocol, _DefaultsOptionalProtocol {
    @usableFromInline var isNil: Bool { value == nil }
    public var _defaults_isNil: Bool { isNil }
}
