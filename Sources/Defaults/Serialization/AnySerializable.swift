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
    public struct AnySerializable: Serializable, Hashable, @unchecked Sendable {
        // `@unchecked`: `object` only ever holds immutable property-list values.
        var object: Any?

        public static var bridge: AnySerializableBridge { .init() }

        /// Wraps a value of any serializable type.
        public init<Value: Serializable>(_ value: Value) {
            object = Value.bridge.serialize(value)
        }

        init(object: Any?) {
            self.object = object
        }

        /// The value as a `Value`, or `nil` if it is not one.
        public func get<Value: Serializable>() -> Value? {
            Value.bridge.deserialize(object as? Value.Serializable)
        }

        /// The value as a `Value`, or `nil` if it is not one. Use it where the type is ambiguous.
        public func get<Value: Serializable>(_: Value.Type) -> Value? {
            get()
        }

        /// Replaces the value.
        public mutating func set<Value: Serializable>(_ newValue: Value) {
            object = Value.bridge.serialize(newValue)
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            PropertyListValue.isEqual(lhs.object, rhs.object)
        }

        public func hash(into hasher: inout Hasher) {
            if let object { PropertyListValue.hash(object, into: &hasher) }
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
