import DefaultsPropertyList
import Synchronization

/// Remembers the last decoded value of an expensive type (`Codable`, property-list `Codable`)
/// together with the stored object it came from, so that reading an unchanged value does not
/// decode it again.
@usableFromInline
final class DecodeCache<Value: Defaults.Serializable>: Sendable {
    // `@unchecked Sendable`: `value`, a decoded `Value`, need not be `Sendable`; it is a value
    // type (classes are never cached), and each read gets its own copy.
    private struct Entry: @unchecked Sendable {
        let object: PropertyListValue
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
        let stored = try? PropertyListValue(object)
        if let stored, let cached = entry.withLock({ $0 }), cached.object == stored {
            return cached.value
        }
        guard let value = decode() else { return nil }
        if let stored {
            entry.withLock { $0 = Entry(object: stored, value: value) }
        }
        return value
    }
}

/// Marks bridges whose decoding costs much more than comparing the stored objects.
protocol ExpensiveDecoding {}
