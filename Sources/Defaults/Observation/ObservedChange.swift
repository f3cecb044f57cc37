import DefaultsPropertyList

/// A stored value as an observation passes it from the thread that made a change to the code that
/// turns it into a typed value. Typed values, which need not be `Sendable`, are decoded from it
/// where they are used and never cross threads themselves.
struct StoredObject: Sendable {
    let value: PropertyListValue?

    /// The object bridges decode, as ``DefaultsSuite/object(forKey:)`` returns it.
    var object: Any? { value?.object }

    func isSameValue(as other: StoredObject) -> Bool {
        value == other.value
    }
}

/// What a set of observed keys read at one moment, in the order of ``ObservedKeys/keys``.
struct ObservedValues: Sendable {
    let objects: [StoredObject]

    func isSameValue(as other: ObservedValues) -> Bool {
        objects.count == other.objects.count
            && zip(objects, other.objects).allSatisfy { $0.isSameValue(as: $1) }
    }
}

/// One notification of an observation: the values before and after, or the initial value.
struct ObservedChange: Sendable {
    /// Whether this is the value the observation started with rather than a change.
    let isInitial: Bool
    /// What the keys read before the change (equal to `new` for the initial value).
    let old: ObservedValues
    /// What the keys read after the change.
    let new: ObservedValues
}
