import Synchronization

/// A queue from one producer to one consumer, in order, holding at most ``capacity`` elements: the
/// producer that adds to a full buffer waits for room, so nothing is ever dropped and nothing
/// grows without bound.
///
/// The connection's reader is the producer of the events it reports to the library: while the
/// library is behind, the reader stops reading the socket, the server's buffer for the device
/// fills, and the server's slow-consumer rule applies on its side.
final class BoundedBuffer<Element: Sendable>: Sendable {
    /// The most elements held at once.
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
    }

    private let state = Mutex(State())

    /// A buffer of `capacity` elements, at least one: a smaller capacity holds one, never traps.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds `element` once there is room, waiting meanwhile. Returns whether it was added: not when
    /// the buffer was finished, nor when the waiting task was cancelled.
    func send(_ element: Element) async -> Bool {
        while true {
            let added = state.withLock { state -> Bool? in
                guard !state.isFinished else { return false }
                guard state.elements.count < capacity else { return nil }
                state.elements.append(element)
                return true
            }
            if let added {
                if added { wake(.consumer) }
                return added
            }
            await wait(as: .producer) { state in state.elements.count < capacity || state.isFinished }
            if Task.isCancelled { return false }
        }
    }

    /// The next element, in order; `nil` once the buffer is finished and empty, or when the waiting
    /// task is cancelled and none is held. Elements added before ``finish()`` are all returned.
    func next() async -> Element? {
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

    /// Takes no more elements; the consumer gets those held, then `nil`, and a producer waiting for
    /// room returns.
    func finish() {
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
