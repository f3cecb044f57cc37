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
    /// change to the consumer, through an `AsyncStream` of them. (This is why the type is not an
    /// `AsyncStream<Value>` as in Defaults: handing a typed value from the writing thread to the
    /// consumer would require `Value: Sendable`, which ``Defaults/Serializable`` does not imply.
    /// Code that iterates or transforms the sequence is unaffected, and code that names
    /// `AsyncStream<Value>` gets one: ``Defaults/updates(_:initial:)->AsyncStream<Value>``.)
    public struct Updates<Element>: AsyncSequence, Sendable {
        public typealias Failure = Never

        /// The stored objects of each change, buffered without bound until taken.
        private let changes: AsyncStream<ObservedChange>
        private let observation: UpdatesObservation
        private let makeElement: @Sendable (ObservedChange) -> Element

        init(keys: ObservedKeys, initial: Bool, makeElement: @escaping @Sendable (ObservedChange) -> Element) {
            let (changes, continuation) = AsyncStream.makeStream(
                of: ObservedChange.self, bufferingPolicy: .unbounded)
            self.changes = changes
            observation = UpdatesObservation(keys: keys, initial: initial, continuation: continuation)
            self.makeElement = makeElement
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(changes: changes.makeAsyncIterator(), observation: observation, makeElement: makeElement)
        }

        /// The iterator of an ``Updates`` sequence.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private var changes: AsyncStream<ObservedChange>.Iterator
            private let observation: UpdatesObservation
            private let makeElement: @Sendable (ObservedChange) -> Element

            init(
                changes: AsyncStream<ObservedChange>.Iterator, observation: UpdatesObservation,
                makeElement: @escaping @Sendable (ObservedChange) -> Element
            ) {
                self.changes = changes
                self.observation = observation
                self.makeElement = makeElement
            }

            /// The next value, waiting for a change; `nil` when the task is cancelled.
            public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Element? {
                // `AsyncStream` would still hand out the changes it holds once cancelled or
                // finished; the sequence ends at once instead, as its documentation says.
                if Task.isCancelled {
                    observation.finish()
                    return nil
                }
                guard observation.isObserving, let change = await changes.next(isolation: actor) else { return nil }
                return makeElement(change)
            }

            /// The next value, waiting for a change; `nil` when the task is cancelled.
            public mutating func next() async -> Element? {
                await next(isolation: nil)
            }
        }
    }
}
