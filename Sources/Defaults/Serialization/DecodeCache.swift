import Synchronization

/// Remembers the last decoded value of an expensive type (`Codable`, property-list `Codable`)
/// together with the stored object it came from, so that reading an unchanged value does not
/// decode it again.
@usableFromInline
final class DecodeCache<Value: Defaults.Serializable>: Sendable {
    // `@unchecked Sendable`: `object` is an immutable property-list value and `value` a value
    // type (classes are never cached), each read getting its own copy.
    private struct Entry: @unchecked Sendable {
        let object: Any
        let value: Value
    }

    private let entry = Mutex<Entry?>(nil)

    /// A cache for `Value`, or `nil` when caching would not help: the type is cheap to decode, or
    /// a class (sharing one decoded instance between reads would let one reader's mutation leak).
    init?() {
        guard Value.Bridge.self is any ExpensiveDecoding.Type,
            !(Value.self is AnyClass)
        else { return nil }
    }

    @usableFromInline
    func value(for object: Any, decode: () -> Value?) -> Value? {
        if let cached = entry.withLock({ $0 }), PropertyListObject.isEqual(cached.object, object) {
            return cached.value
        }
        guard let value = decode() else { return nil }
        entry.withLock { $0 = Entry(object: object, value: value) }
        return value
    }
}

/// Marks bridges whose decoding costs much more than comparing the stored objects.
protocol ExpensiveDecoding {}
