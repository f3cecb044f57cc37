import Synchronization

/// A queue from one producer to one consumer, in order, holding at most ``capacity`` elements
/// unless its bound is lifted: the producer that adds to a full buffer waits for room, so nothing
/// is ever dropped and nothing grows without bound.
///
/// The connection's reader is the producer of the events it reports to the library: while the
/// library is behind, the reader stops reading the socket, the server's buffer for the device
/// fills, and the server's slow-consumer rule applies on its side. While a call awaits its answer,
/// which comes behind the events, the bound is lifted (``liftBound()``). (SPI `Testing`: the
/// sync service's tests read their hand-made connections through one.)
@_spi(Testing) public final class BoundedBuffer<Element: Sendable>: Sendable {
    /// The most elements held at once while the bound is not lifted.
    let capacity: Int

    private enum Side {
        /// The producer, waiting for room.
        case producer
        /// The consumer, waiting for an element.
        case consumer
    }

    private struct State {
        var elements: [Element] = []
        var isFinished = false
        var waiting: [Side: CheckedContinuation<Void, Never>] = [:]
        /// Lifts not yet restored: while any is, the producer adds past the capacity.
        var lifts = 0

        func hasRoom(capacity: Int) -> Bool { elements.count < capacity || lifts > 0 }
    }

    private let state = Mutex(State())

    /// A buffer of `capacity` elements, at least one: a smaller capacity holds one, never traps.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds `element` once there is room (at once while the bound is lifted), waiting meanwhile.
    /// Returns whether it was added: not when the buffer was finished, nor when the waiting task was
    /// cancelled.
    public func send(_ element: Element) async -> Bool {
        while true {
            let added = state.withLock { state -> Bool? in
                guard !state.isFinished else { return false }
                guard state.hasRoom(capacity: capacity) else { return nil }
                state.elements.append(element)
                return true
            }
            if let added {
                if added { wake(.consumer) }
                return added
            }
            await wait(as: .producer) { state in state.hasRoom(capacity: capacity) || state.isFinished }
            if Task.isCancelled { return false }
        }
    }

    /// The next element, in order; `nil` once the buffer is finished and empty, or when the waiting
    /// task is cancelled and none is held. Elements added before ``finish()`` are all returned.
    public func next() async -> Element? {
        while true {
            let taken = state.withLock { state -> (element: Element?, isOver: Bool) in
                guard state.elements.isEmpty else { return (state.elements.removeFirst(), false) }
                return (nil, state.isFinished)
            }
            if let element = taken.element {
                wake(.producer)
                return element
            }
            if taken.isOver || Task.isCancelled { return nil }
            await wait(as: .consumer) { state in !state.elements.isEmpty || state.isFinished }
        }
    }

    /// Lets the producer add past the capacity, waking it if it waits, until as many
    /// ``restoreBound()`` calls as lifts: a call's answer comes behind the elements, and a producer
    /// held by a consumer that is behind would never read it. The bound holds again once the
    /// consumer takes what went past it.
    func liftBound() {
        state.withLock { $0.lifts += 1 }
        wake(.producer)
    }

    /// Ends one ``liftBound()``.
    func restoreBound() {
        state.withLock { $0.lifts -= 1 }
    }

    /// Takes no more elements; the consumer gets those held, then `nil`, and a producer waiting for
    /// room returns.
    public func finish() {
        state.withLock { $0.isFinished = true }
        wake(.producer)
        wake(.consumer)
    }

    /// Waits as `side` until `isReady` holds, or until the calling task is cancelled.
    private func wait(as side: Side, until isReady: (State) -> Bool) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Checked and stored under one lock, so that no wake-up comes between them.
                let isNow = state.withLock { state -> Bool in
                    guard !isReady(state), !Task.isCancelled else { return true }
                    state.waiting[side] = continuation
                    return false
                }
                if isNow { continuation.resume() }
            }
        } onCancel: {
            wake(side)
        }
    }

    private func wake(_ side: Side) {
        state.withLock { $0.waiting.removeValue(forKey: side) }?.resume()
    }
}
