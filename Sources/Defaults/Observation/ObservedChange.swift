/// A stored property-list object as an observation passes it from the thread that made a change to
/// the code that turns it into a typed value.
///
/// `@unchecked Sendable`: the object is a value a suite returned from `object(forKey:)`. Suites
/// already hand the same objects to readers on any thread (they are property-list values: strings,
/// numbers, dates, data, and arrays and dictionaries of them, which nobody mutates in place).
/// Observation only compares and decodes them, so passing them on adds no sharing that reading the
/// suite does not already have. Typed values, which need not be `Sendable`, are decoded from these
/// objects where they are used and never cross threads themselves.
struct StoredObject: @unchecked Sendable {
    let object: Any?

    func isSameValue(as other: StoredObject) -> Bool {
        PropertyListObject.isEqual(object, other.object)
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
