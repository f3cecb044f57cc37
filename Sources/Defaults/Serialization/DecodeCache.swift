import DefaultsPropertyList
import Synchronization

/// Remembers the last decoded value of an expensive type (`Codable`, property-list `Codable`)
/// together with the stored object it came from, so that reading an unchanged value does not
/// decode it again.
@usableFromInline
final class DecodeCache<Value: Defaults.Serializable>: Sendable {
    private let entry = Mutex<CopiedValue<(object: PropertyListValue, value: Value)>?>(nil)

    /// A cache for `Value`, or `nil` when caching would not help: the type is cheap to decode, or
    /// is or holds class instances (sharing one decoded instance between reads would let one
    /// reader's mutation leak into the other's).
    init?() {
        guard Value.Bridge.self is any ExpensiveDecoding.Type,
            !ReferenceSemantics.isPossible(in: Value.self)
        else { return nil }
    }

    @usableFromInline
    func value(for object: Any, decode: () -> Value?) -> Value? {
        let stored = try? PropertyListValue(object)
        if let stored, let cached = entry.withLock({ $0 }), cached.value.object == stored {
            return cached.value.value
        }
        guard let value = decode() else { return nil }
        if let stored {
            entry.withLock { $0 = CopiedValue((object: stored, value: value)) }
        }
        return value
    }
}

/// Marks bridges whose decoding costs much more than comparing the stored objects.
protocol ExpensiveDecoding {}
