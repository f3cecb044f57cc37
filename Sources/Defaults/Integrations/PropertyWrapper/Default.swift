/// Reads and writes a ``Defaults/Key`` through a property, in any struct or class.
///
/// ```swift
/// extension Defaults.Keys {
///     static let volume = Key<Int>("volume", default: 5)
/// }
///
/// struct Player {
///     @Default(.volume) var volume
/// }
///
/// let player = Player()
/// player.volume = 7          // Defaults[.volume] = 7
/// player.$volume.reset()     // back to 5
/// ```
///
/// The property holds no value of its own: each read is `Defaults[key]` and each write is
/// `Defaults[key] = newValue`, so every copy of the struct, every instance of the class and every
/// other part of the program see the same value. The setter is `nonmutating`, so a `let` instance
/// can be written.
///
/// The projected value (`$volume`) is the wrapper itself, with ``reset()``, ``updates(initial:)``
/// and ``observe(options:_:)``.
///
/// To point a type's settings at another suite (a test's ``InMemorySuite``, a second account)
/// without declaring its keys again, pass the suite:
///
/// ```swift
/// final class Mixer {
///     @Default var volume: Int
///
///     init(suite: any DefaultsSuite = Defaults.standardSuite) {
///         _volume = Default(.volume, suite: suite)
///     }
/// }
/// ```
@propertyWrapper
public struct Default<Value: Defaults.Serializable>: Sendable {
    /// The key the property reads and writes.
    public let key: Defaults.Key<Value>

    /// Backs the property with `key`, in the key's own suite.
    public init(_ key: Defaults.Key<Value>) {
        self.key = key
    }

    /// Backs the property with the key of the same name and default value in `suite`
    /// (see ``Defaults/Key/in(_:)-(DefaultsSuite)``).
    public init(_ key: Defaults.Key<Value>, suite: any DefaultsSuite) {
        self.key = key.in(suite)
    }

    /// The key's value: what is stored, or its default value. Assigning `nil` to an optional key
    /// removes the stored value.
    public var wrappedValue: Value {
        get { Defaults[key] }
        nonmutating set { Defaults[key] = newValue }
    }

    /// The wrapper itself, for ``reset()``, ``updates(initial:)`` and ``observe(options:_:)``
    /// through `$property`.
    public var projectedValue: Self {
        self
    }

    /// Removes the stored value, so that the property reads the key's default value again.
    public func reset() {
        key.reset()
    }

    /// The property's values, the current one first unless `initial` is `false`, then each new
    /// one; see ``Defaults/updates(_:initial:)->Defaults.Updates<Value>``.
    ///
    /// ```swift
    /// for await volume in player.$volume.updates() {
    ///     print("Volume:", volume)
    /// }
    /// ```
    public func updates(initial: Bool = true) -> Defaults.Updates<Value> {
        Defaults.updates(key, initial: initial)
    }

    /// Calls `handler` with each change of the property's value (and at once with the current
    /// value, unless `options` is empty); see ``Defaults/observe(_:options:handler:)``. As there,
    /// the handler need not be `Sendable`, and runs on the thread that made the change.
    ///
    /// ```swift
    /// let observation = player.$volume.observe { change in
    ///     print(change.oldValue, "→", change.newValue)
    /// }
    /// ```
    ///
    /// - Returns: The observation; it stops when invalidated or no longer referenced.
    public func observe(
        options: Defaults.ObservationOptions = [.initial],
        _ handler: @escaping (Defaults.KeyChange<Value>) -> Void
    ) -> Defaults.KeyObservation {
        Defaults.observe(key, options: options, handler: handler)
    }
}
