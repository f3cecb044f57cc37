/// The `AsyncStream` form of ``Defaults/updates(_:initial:)->Defaults.Updates<Value>``, for code
/// that names the type Defaults returns.
///
/// Elements are decoded on the thread that made the change and buffered, as Defaults does; the
/// stream stops observing when its iterating task is cancelled or the stream is dropped (an
/// `AsyncStream` cancels its storage then, which calls `onTermination`).
enum UpdatesStream {
    static func make<Element>(
        keys: ObservedKeys, initial: Bool, makeElement: @escaping @Sendable (ObservedChange) -> Element
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .unbounded)
        // The continuation need not be `Sendable` (nor `Element`): it is yielded to on the thread
        // that made the change, which is what Defaults' `AsyncStream` does.
        let yield = UncheckedSendableClosure { (change: ObservedChange) in
            _ = continuation.yield(makeElement(change))
        }
        let core = ObservationCore(keys: keys, deliver: yield.call)
        // Called once, when the stream ends; dropping the handler then breaks the cycle
        // core → continuation → storage → handler → core.
        continuation.onTermination = { _ in core.invalidate() }
        core.start(initial: initial)
        return stream
    }
}
