extension Defaults {
    /// Calls `handler` with a strongly typed change each time the value of `key` changes.
    ///
    /// ```swift
    /// let observation = Defaults.observe(.isUnicornMode) { change in
    ///     print(change.oldValue, "→", change.newValue)
    /// }
    /// ```
    ///
    /// Every path that changes what a read of the key returns reaches the handler once:
    /// `Defaults[key] =`, `suite[key] =`, `key.reset()`, `Defaults.reset(…)` (typed keys or names),
    /// ``Defaults/removeAll(suite:)-(DefaultsSuite)``, and, for a file-backed suite, another process. Writing a value
    /// equal to the current one is not a change and calls no handler; neither is a change made
    /// inside ``Defaults/withoutPropagation(_:)``.
    ///
    /// **Threads.** The handler runs synchronously on the thread that made the change (for a
    /// change made by another process, the suite's watcher queue), before the write returns. It
    /// is never called concurrently with itself nor reentrantly: a change made while it runs (by
    /// another thread, or by the handler itself) is delivered right after it returns, on the
    /// thread that is running it. So changes arrive one at a time and in order, and
    /// `oldValue` is always the previous call's `newValue`. Keep the handler short; hop to an
    /// actor for anything else (`Task { @MainActor in … }`).
    ///
    /// As in Defaults, the handler need not be `Sendable`: it may set the observing object's own
    /// properties. What the compiler cannot check is then the caller's to keep: the handler runs on
    /// the thread that made the change, so what it touches must be safe to touch from there (an
    /// object that only one thread changes, or state behind a lock or an actor).
    ///
    /// **Values.** The handler gets what a read of the key returns when it runs. When changes come
    /// faster than they are delivered, or another observer changed the key first, `newValue` is
    /// the latest value, and a change that leaves the value as this observation last reported it
    /// is not reported. `Value` need not be `Sendable`: values are decoded from the stored
    /// property-list objects on the thread that calls the handler.
    ///
    /// - Parameters:
    ///   - key: The key to observe.
    ///   - options: `[.initial]` (the default) also calls the handler with the current value
    ///     before `observe` returns; `[]` reports changes only.
    ///   - handler: Called with each change.
    /// - Returns: The observation. It stops when invalidated or no longer referenced, unless tied to
    ///   an object's lifetime with ``KeyObservation/tieToLifetime(of:)``.
    public static func observe<Value: Serializable>(
        _ key: Key<Value>,
        options: ObservationOptions = [.initial],
        handler: @escaping (KeyChange<Value>) -> Void
    ) -> KeyObservation {
        // Called on the thread that makes a change, as Defaults calls it (see above).
        let handler = UncheckedSendableClosure(handler).call
        // Values are decoded on the delivering thread from the stored objects, so `Value` need
        // not be Sendable: no typed value is ever handed from one thread to another.
        // Observers of one key share one read and decode per change, when values can be shared.
        if KeyBroadcast<Value>.isUsable {
            return KeyObservation(core: key.broadcast().join(initial: options.wantsInitial, handler: handler))
        }
        let delivery = KeyChangeHandler(reader: KeyValueReader(key), handler: handler)
        let core = ObservationCore(keys: delivery.reader.keys, deliver: delivery.deliver)
        let observation = KeyObservation(core: core)
        core.start(initial: options.wantsInitial)
        return observation
    }

    /// Calls `handler` each time the value of any of `keys` changes.
    ///
    /// The keys may belong to different suites. Changes made together (such as one
    /// ``Defaults/removeAll(suite:)-(DefaultsSuite)``) call the handler once. The rules of
    /// ``observe(_:options:handler:)`` apply: threads (the handler need not be `Sendable`, and runs
    /// on the thread that made the change), equal writes, ``withoutPropagation(_:)``.
    ///
    /// ```swift
    /// let observation = Defaults.observe(keys: .isUnicornMode, .volume) {
    ///     print("Settings changed")
    /// }
    /// ```
    public static func observe(
        keys: Keys...,
        options: ObservationOptions = [.initial],
        handler: @escaping () -> Void
    ) -> KeyObservation {
        observe(keys: keys, options: options, handler: handler)
    }

    /// Calls `handler` each time the value of any of `keys` changes; see
    /// the variadic `observe(keys:options:handler:)`.
    public static func observe(
        keys: [Keys],
        options: ObservationOptions = [.initial],
        handler: @escaping () -> Void
    ) -> KeyObservation {
        // Called on the thread that makes a change, as Defaults calls it.
        let handler = UncheckedSendableClosure(handler)
        let core = ObservationCore(keys: ObservedKeys(keys)) { _ in handler.call() }
        let observation = KeyObservation(core: core)
        core.start(initial: options.wantsInitial)
        return observation
    }
}
