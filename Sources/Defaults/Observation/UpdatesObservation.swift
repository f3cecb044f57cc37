/// The observation behind one ``Defaults/Updates`` sequence, feeding its stream from creation.
///
/// The suites hold the observation's core weakly; the sequence and its iterators hold this object.
/// Cancelling an iterating task terminates the stream, which stops observing at once; releasing
/// the sequence and its iterators (even if never iterated) stops it in `deinit`.
final class UpdatesObservation: Sendable {
    private let core: ObservationCore
    private let continuation: AsyncStream<ObservedChange>.Continuation

    init(keys: ObservedKeys, initial: Bool, continuation: AsyncStream<ObservedChange>.Continuation) {
        let core = ObservationCore(keys: keys) { change in continuation.yield(change) }
        // Called once, when the stream ends; dropping the handler then breaks the cycle
        // core → continuation → stream → handler → core.
        continuation.onTermination = { _ in core.invalidate() }
        self.core = core
        self.continuation = continuation
        core.start(initial: initial)
    }

    deinit {
        finish()
    }

    /// Whether the sequence still delivers changes (no iterating task was cancelled).
    var isObserving: Bool { core.isValid }

    /// Stops observing and ends the sequence for every waiting and future `next()`.
    func finish() {
        core.invalidate()
        continuation.finish()
    }
}
