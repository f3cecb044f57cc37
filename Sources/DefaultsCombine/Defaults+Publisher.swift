import Defaults

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension Defaults {
    /// A publisher of the changes to `key`, built on `Defaults.observe(_:options:handler:)`.
    ///
    /// ```swift
    /// let cancellable = Defaults.publisher(.isUnicornMode)
    ///     .map(\.newValue)
    ///     .sink { print("Unicorn mode:", $0) }
    /// ```
    ///
    /// The observation starts when the subscriber first requests values: with `[.initial]` (the
    /// default) the current value is sent then, synchronously. Each change is then sent once, on
    /// the thread that made it, under the same rules as `Defaults.observe(_:options:handler:)`
    /// (equal writes and changes made inside `Defaults.withoutPropagation(_:)` send nothing). A
    /// change that arrives while the subscriber has no outstanding demand is dropped, as Combine's
    /// key-value observing publisher does. Cancelling the subscription stops the observation.
    public static func publisher<Value: Serializable>(
        _ key: Key<Value>,
        options: ObservationOptions = [.initial]
    ) -> AnyPublisher<KeyChange<Value>, Never> {
        ObservationPublisher(start: KeyObservationStarter(key: key, options: options).start)
            .eraseToAnyPublisher()
    }

    /// A publisher that sends `()` each time any of `keys` changes (and once at the start with
    /// `[.initial]`, the default); see ``publisher(_:options:)``.
    ///
    /// ```swift
    /// let cancellable = Defaults.publisher(keys: .isUnicornMode, .volume)
    ///     .sink { print("Settings changed") }
    /// ```
    public static func publisher(
        keys: Keys...,
        options: ObservationOptions = [.initial]
    ) -> AnyPublisher<Void, Never> {
        publisher(keys: keys, options: options)
    }

    /// A publisher that sends `()` each time any of `keys` changes; see
    /// the variadic `publisher(keys:options:)`.
    public static func publisher(
        keys: [Keys],
        options: ObservationOptions = [.initial]
    ) -> AnyPublisher<Void, Never> {
        ObservationPublisher(start: KeysObservationStarter(keys: keys, options: options).start)
            .eraseToAnyPublisher()
    }
}

/// Starts the observation of one key for a subscription. A `Sendable` value with a method rather
/// than a closure, so that no closure captures the metatype of `Value`.
struct KeyObservationStarter<Value: Defaults.Serializable>: Sendable {
    let key: Defaults.Key<Value>
    let options: Defaults.ObservationOptions

    func start(_ send: @escaping @Sendable (Defaults.KeyChange<Value>) -> Void) -> Defaults.KeyObservation {
        Defaults.observe(key, options: options, handler: send)
    }
}

/// Starts the observation of several keys for a subscription.
struct KeysObservationStarter: Sendable {
    let keys: [Defaults.Keys]
    let options: Defaults.ObservationOptions

    func start(_ send: @escaping @Sendable (()) -> Void) -> Defaults.KeyObservation {
        Defaults.observe(keys: keys, options: options) { send(()) }
    }
}
