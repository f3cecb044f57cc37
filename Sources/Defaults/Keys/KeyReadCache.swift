import Synchronization

/// The value a key decoded last, with the suite generation (``DefaultsSuite/valueGeneration``)
/// it was read at: while the suite's generation is unchanged, a read returns it without a lookup,
/// a cast or a decode.
///
/// The generation is loaded before the value is read from the suite, so a value is never filed
/// under a generation newer than the one it was read at: a write racing with a read can only
/// make the cache miss once more, never serve the value it replaced.
@usableFromInline
final class KeyReadCache<Value>: Sendable {
    @usableFromInline let entry = Mutex<CopiedValue<(generation: UInt64, value: Value)>?>(nil)

    /// A cache, or `nil` when `Value` is or holds class instances: two reads would share one
    /// instance, and one reader's mutation would reach the other.
    init?() {
        guard !ReferenceSemantics.isPossible(in: Value.self) else { return nil }
    }

    /// The cached value if it was read at `generation`.
    @inlinable
    func value(at generation: UInt64) -> Value? {
        entry.withLock { entry in
            guard let entry, entry.value.generation == generation else { return nil }
            return entry.value.value
        }
    }

    /// Keeps `value`, read at `generation` (loaded before the read).
    @inlinable
    func store(_ value: Value, at generation: UInt64) {
        let new = CopiedValue((generation: generation, value: value))
        entry.withLock { $0 = new }
    }
}

/// Tells whether values of a type can share class instances: the type is a class, or an
/// optional or collection of one.
package enum ReferenceSemantics {
    /// Whether values of `type` can share class instances.
    public static func isPossible(in type: Any.Type) -> Bool {
        if type is AnyClass { return true }
        guard let container = type as? any ValueContainer.Type else { return false }
        return container.containedTypes.contains { isPossible(in: $0) }
    }
}

/// A generic value type whose values hold values of other types.
protocol ValueContainer {
    static var containedTypes: [Any.Type] { get }
}

extension Optional: ValueContainer {
    static var containedTypes: [Any.Type] { [Wrapped.self] }
}

extension Array: ValueContainer {
    static var containedTypes: [Any.Type] { [Element.self] }
}

extension Set: ValueContainer {
    static var containedTypes: [Any.Type] { [Element.self] }
}

extension Dictionary: ValueContainer {
    static var containedTypes: [Any.Type] { [Key.self, Value.self] }
}
