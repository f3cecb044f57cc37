extension Defaults {
    /// The values of `key`: the current one first (unless `initial` is `false`), then each new one.
    ///
    /// ```swift
    /// Task {
    ///     for await value in Defaults.updates(.isUnicornMode) {
    ///         print("Value:", value)
    ///     }
    /// }
    /// ```
    ///
    /// A value arrives for every change to what a read of the key returns, whatever made it (see
    /// ``observe(_:options:handler:)`` for the list, equal writes and
    /// ``withoutPropagation(_:)``), once and in order. Cancelling the iterating task ends the loop
    /// and removes the observer. See ``Updates`` for buffering and isolation.
    public static func updates<Value: Serializable>(_ key: Key<Value>, initial: Bool = true) -> Updates<Value> {
        let reader = KeyValueReader(key)
        return Updates(keys: reader.keys, initial: initial, makeElement: reader.newValue)
    }

    /// An element each time any of `keys` changes (first one at once, unless `initial` is `false`).
    ///
    /// ```swift
    /// for await _ in Defaults.updates([.isUnicornMode, .volume]) {
    ///     print("Settings changed")
    /// }
    /// ```
    ///
    /// Changes made together (such as one ``removeAll(suite:)-(DefaultsSuite)``) yield one element.
    public static func updates(_ keys: [Keys], initial: Bool = true) -> Updates<Void> {
        Updates(keys: ObservedKeys(keys), initial: initial) { _ in () }
    }

    /// The current values of several keys, as a tuple, each time any of them changes (first at
    /// once, unless `initial` is `false`).
    ///
    /// ```swift
    /// for await (isUnicornMode, volume) in Defaults.updates(.isUnicornMode, .volume) {
    ///     print(isUnicornMode, volume)
    /// }
    /// ```
    ///
    /// The tuple holds the values all keys had at the moment of the change.
    public static func updates<each Value: Serializable>(
        _ keys: repeat Key<each Value>,
        initial: Bool = true
    ) -> Updates<(repeat each Value)> {
        let reader = KeyValuesReader(repeat each keys)
        return Updates(keys: reader.observed, initial: initial, makeElement: reader.newValues)
    }

    /// The changes of `key`, each with the value before and after it and whether it is the initial
    /// value (as swift-user-defaults' observation marks it): the sequence form of
    /// ``observe(_:options:handler:)``.
    ///
    /// ```swift
    /// for await change in Defaults.changes(.isUnicornMode) {
    ///     if change.isInitial {
    ///         print("Starting with", change.newValue)
    ///     } else {
    ///         print("Changed from", change.oldValue, "to", change.newValue)
    ///     }
    /// }
    /// ```
    ///
    /// This is the same sequence as ``updates(_:initial:)->Defaults.Updates<Value>``, with each
    /// element's previous value and kind kept.
    public static func changes<Value: Serializable>(_ key: Key<Value>, initial: Bool = true) -> Updates<
        KeyChange<Value>
    > {
        let reader = KeyValueReader(key)
        return Updates(keys: reader.keys, initial: initial, makeElement: reader.keyChange)
    }

    // Defaults returns `AsyncStream`; these forms give it to code that names that type
    // (`let values: AsyncStream<Bool> = Defaults.updates(.isUnicornMode)`). Disfavored, so that a
    // loop or a sequence operator gets ``Updates``.

    /// The values of `key` as the `AsyncStream` Defaults returns, for code that names that type.
    ///
    /// ```swift
    /// func volumes() -> AsyncStream<Int> {
    ///     Defaults.updates(.volume)
    /// }
    /// ```
    ///
    /// Values are decoded on the thread that made the change and buffered until taken, as in
    /// Defaults; a non-`Sendable` `Value` crosses to the consumer there. Iteration, cancellation and
    /// the values themselves are those of ``updates(_:initial:)->Defaults.Updates<Value>``, which is
    /// what code that does not name the type gets.
    @_disfavoredOverload
    public static func updates<Value: Serializable>(_ key: Key<Value>, initial: Bool = true) -> AsyncStream<Value> {
        let reader = KeyValueReader(key)
        return UpdatesStream.make(keys: reader.keys, initial: initial, makeElement: reader.newValue)
    }

    /// The values of several keys, as a tuple, in the `AsyncStream` Defaults returns; see
    /// ``updates(_:initial:)->AsyncStream<Value>``.
    @_disfavoredOverload
    public static func updates<each Value: Serializable>(
        _ keys: repeat Key<each Value>,
        initial: Bool = true
    ) -> AsyncStream<(repeat each Value)> {
        let reader = KeyValuesReader(repeat each keys)
        return UpdatesStream.make(keys: reader.observed, initial: initial, makeElement: reader.newValues)
    }

    /// An element each time any of `keys` changes, in the `AsyncStream` Defaults returns; see
    /// ``updates(_:initial:)->AsyncStream<Value>``.
    @_disfavoredOverload
    public static func updates(_ keys: [Keys], initial: Bool = true) -> AsyncStream<Void> {
        UpdatesStream.make(keys: ObservedKeys(keys), initial: initial) { _ in () }
    }
}
