extension Defaults {
    /// Stores an optional: `nil` is stored as no value at all.
    public struct OptionalBridge<Wrapped: Serializable>: Bridge, Sendable {
        public typealias Value = Wrapped?
        public typealias Serializable = Wrapped.Serializable
        public init() {}

        public func serialize(_ value: Wrapped??) -> Serializable? {
            Wrapped.bridge.serialize(value.flatMap { $0 })
        }

        public func deserialize(_ object: Serializable?) -> Wrapped?? {
            Wrapped.bridge.deserialize(object).map { .some($0) }
        }
    }

    /// Stores a sequence of elements as a property-list array; reads fail if any element does.
    struct ElementsCoder<Element: Serializable> {
        static func serialize(_ elements: some Sequence<Element>) -> [Any]? {
            var result: [Any] = []
            result.reserveCapacity(elements.underestimatedCount)
            for element in elements {
                guard let object = Element.storedForm(of: element) else { return nil }
                result.append(object)
            }
            return result
        }

        static func deserialize(_ objects: [Any]?) -> [Element]? {
            guard let objects else { return nil }
            var result: [Element] = []
            result.reserveCapacity(objects.count)
            for object in objects {
                guard let element = Element.value(fromStoredForm: object) else { return nil }
                result.append(element)
            }
            return result
        }
    }

    /// Stores an array as a property-list array of its serialized elements.
    public struct ArrayBridge<Element: Serializable>: Bridge, Sendable {
        public typealias Value = [Element]
        public typealias Serializable = [Any]
        public init() {}
        public func serialize(_ value: [Element]?) -> [Any]? { value.flatMap { ElementsCoder.serialize($0) } }
        public func deserialize(_ object: [Any]?) -> [Element]? { ElementsCoder.deserialize(object) }
    }

    /// Stores a set as a property-list array of its serialized elements.
    public struct SetBridge<Element: Serializable & Hashable>: Bridge, Sendable {
        public typealias Value = Set<Element>
        public typealias Serializable = [Any]
        public init() {}
        public func serialize(_ value: Set<Element>?) -> [Any]? { value.flatMap { ElementsCoder.serialize($0) } }
        public func deserialize(_ object: [Any]?) -> Set<Element>? { ElementsCoder.deserialize(object).map { Set($0) } }
    }

    /// Stores a dictionary as a property-list dictionary, keys turned into strings.
    public struct DictionaryBridge<Key: LosslessStringConvertible & Hashable, Element: Serializable>: Bridge, Sendable {
        public typealias Value = [Key: Element]
        public typealias Serializable = [String: Any]
        public init() {}

        public func serialize(_ value: [Key: Element]?) -> [String: Any]? {
            guard let value else { return nil }
            var result: [String: Any] = [:]
            result.reserveCapacity(value.count)
            for (key, element) in value {
                guard let object = Element.storedForm(of: element) else { return nil }
                result[key.description] = object
            }
            return result
        }

        public func deserialize(_ object: [String: Any]?) -> [Key: Element]? {
            guard let object else { return nil }
            var result: [Key: Element] = [:]
            result.reserveCapacity(object.count)
            for (name, stored) in object {
                guard let key = Key(name),
                    let element = Element.value(fromStoredForm: stored)
                else { return nil }
                result[key] = element
            }
            return result
        }
    }

    /// Stores a ``CollectionSerializable`` as a property-list array.
    public struct CollectionBridge<Value: CollectionSerializable>: Bridge, Sendable where Value.Element: Serializable {
        public typealias Serializable = [Any]
        public init() {}
        public func serialize(_ value: Value?) -> [Any]? { value.flatMap { ElementsCoder.serialize($0) } }
        public func deserialize(_ object: [Any]?) -> Value? { ElementsCoder.deserialize(object).map { Value($0) } }
    }

    /// Stores a ``SetAlgebraSerializable`` as a property-list array.
    public struct SetAlgebraBridge<Value: SetAlgebraSerializable>: Bridge, Sendable
    where Value.Element: Serializable & Hashable {
        public typealias Serializable = [Any]
        public init() {}

        public func serialize(_ value: Value?) -> [Any]? {
            value.flatMap { ElementsCoder.serialize($0.toArray()) }
        }

        public func deserialize(_ object: [Any]?) -> Value? {
            ElementsCoder.deserialize(object).map { Value($0) }
        }
    }

    /// Stores a `Range` as a two-element array `[lowerBound, upperBound]`.
    public struct RangeBridge<Bound: Serializable & Comparable>: Bridge, Sendable {
        public typealias Value = Range<Bound>
        public typealias Serializable = [Any]
        public init() {}

        public func serialize(_ value: Range<Bound>?) -> [Any]? {
            value.flatMap { ElementsCoder.serialize([$0.lowerBound, $0.upperBound]) }
        }

        public func deserialize(_ object: [Any]?) -> Range<Bound>? {
            guard let bounds = ElementsCoder<Bound>.deserialize(object), bounds.count == 2,
                bounds[0] <= bounds[1]
            else { return nil }
            return bounds[0]..<bounds[1]
        }
    }

    /// Stores a `ClosedRange` as a two-element array `[lowerBound, upperBound]`.
    public struct ClosedRangeBridge<Bound: Serializable & Comparable>: Bridge, Sendable {
        public typealias Value = ClosedRange<Bound>
        public typealias Serializable = [Any]
        public init() {}

        public func serialize(_ value: ClosedRange<Bound>?) -> [Any]? {
            value.flatMap { ElementsCoder.serialize([$0.lowerBound, $0.upperBound]) }
        }

        public func deserialize(_ object: [Any]?) -> ClosedRange<Bound>? {
            guard let bounds = ElementsCoder<Bound>.deserialize(object), bounds.count == 2,
                bounds[0] <= bounds[1]
            else { return nil }
            return bounds[0]...bounds[1]
        }
    }
}

extension Defaults.OptionalBridge: ExpensiveDecoding where Wrapped.Bridge: ExpensiveDecoding {}
extension Defaults.ArrayBridge: ExpensiveDecoding where Element.Bridge: ExpensiveDecoding {}
extension Defaults.DictionaryBridge: ExpensiveDecoding where Element.Bridge: ExpensiveDecoding {}
