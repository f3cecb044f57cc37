/// A value of a key's `Value` type handed from one thread to another: a decode cache's entry, a
/// broadcast's change.
///
/// `@unchecked Sendable`: `Value` need not be `Sendable` (as in Defaults). Boxes are made only for
/// types without reference semantics (``ReferenceSemantics``: the caches' and broadcasts'
/// initializers check), so the receiving thread gets its own copy and no instance is shared.
@usableFromInline
struct CopiedValue<Wrapped>: @unchecked Sendable {
    @usableFromInline let value: Wrapped

    @inlinable
    init(_ value: Wrapped) {
        self.value = value
    }
}
