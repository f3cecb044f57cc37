extension Defaults {
    /// An asynchronous sequence of the values of one or more keys: what
    /// ``Defaults/updates(_:initial:)->Defaults.Updates<Value>`` and ``Defaults/changes(_:initial:)`` return.
    ///
    /// The sequence starts observing when it is created: with `initial: true` its first element is
    /// the value at that moment, and no change made after that is missed, even before iteration
    /// starts. Changes are buffered until they are taken, each one once, in order. A sequence is
    /// meant for one loop; call `updates` again for another consumer.
    ///
    /// It never ends by itself. It ends, and stops observing at once, when the iterating task is
    /// cancelled (or the loop is left and the sequence dropped):
    ///
    /// ```swift
    /// let task = Task {
    ///     for await isOn in Defaults.updates(.isUnicornMode) {
    ///         print("Unicorn mode:", isOn)
    ///     }
    /// }
    /// // …
    /// task.cancel()
    /// ```
    ///
    /// Elements are decoded from the stored values in the iterating task's isolation, so `Element`
    /// need not be `Sendable`: only stored property-list objects cross from the thread that made a
    /// change to the consumer. (This is why the type is not an `AsyncStream<Value>` as in Defaults:
    /// handing a typed value from the writing thread to the consumer would require
    /// `Value: Sendable`, which ``Defaults/Serializable`` does not imply. Code that iterates or
    /// transforms the sequence is unaffected.)
    public struct Updates<Element>: AsyncSequence, Sendable {
        public typealias Failure = Never

        private let buffer: UpdatesBuffer
        private let makeElement: @Sendable (ObservedChange) -> Element

        init(keys: ObservedKeys, initial: Bool, makeElement: @escaping @Sendable (ObservedChange) -> Element) {
            buffer = UpdatesBuffer(keys: keys, initial: initial)
            self.makeElement = makeElement
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(buffer: buffer, makeElement: makeElement)
        }

        /// The iterator of an ``Updates`` sequence.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private let buffer: UpdatesBuffer
            private let makeElement: @Sendable (ObservedChange) -> Element

            init(buffer: UpdatesBuffer, makeElement: @escaping @Sendable (ObservedChange) -> Element) {
                self.buffer = buffer
                self.makeElement = makeElement
            }

            /// The next value, waiting for a change; `nil` when the task is cancelled.
            public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Element? {
                guard let change = await buffer.next(isolation: actor) else { return nil }
                return makeElement(change)
            }

            /// The next value, waiting for a change; `nil` when the task is cancelled.
            public mutating func next() async -> Element? {
                await next(isolation: nil)
            }
        }
    }
}
