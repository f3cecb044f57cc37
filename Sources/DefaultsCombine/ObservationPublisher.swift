import Defaults
import Foundation

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// A publisher whose subscriptions each run one ``Defaults/KeyObservation``.
struct ObservationPublisher<Output>: Publisher {
    typealias Failure = Never

    let start: @Sendable (@escaping @Sendable (Output) -> Void) -> Defaults.KeyObservation

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        subscriber.receive(subscription: ObservationSubscription(subscriber: subscriber, start: start))
    }
}

/// The subscription of an ``ObservationPublisher``: starts the observation on the first demand,
/// sends what it delivers while there is demand, and invalidates it on cancellation.
///
/// `@unchecked Sendable`: the observation's handler, which may run on any thread, holds this
/// object. Every mutable property is read and written only while holding `lock`, and the
/// subscriber is called outside the lock. The observation never calls its handler concurrently
/// with itself, so the subscriber receives values one at a time, as Combine requires.
final class ObservationSubscription<S: Subscriber>: Subscription, @unchecked Sendable where S.Failure == Never {
    private let lock = NSLock()
    private var subscriber: S?
    private var demand = Subscribers.Demand.none
    private var observation: Defaults.KeyObservation?
    private var isStarted = false
    private let start: @Sendable (@escaping @Sendable (S.Input) -> Void) -> Defaults.KeyObservation

    init(subscriber: S, start: @escaping @Sendable (@escaping @Sendable (S.Input) -> Void) -> Defaults.KeyObservation) {
        self.subscriber = subscriber
        self.start = start
    }

    func request(_ demand: Subscribers.Demand) {
        let shouldStart = lock.withLock {
            guard subscriber != nil else { return false }
            self.demand += demand
            guard !isStarted, self.demand > 0 else { return false }
            isStarted = true
            return true
        }
        guard shouldStart else { return }
        // Outside the lock: the initial value is delivered before `start` returns.
        let observation = start(WeakSender(subscription: self).send)
        let isCancelled = lock.withLock {
            guard subscriber != nil else { return true }
            self.observation = observation
            return false
        }
        if isCancelled {
            observation.invalidate()
        }
    }

    func cancel() {
        let observation = lock.withLock {
            subscriber = nil
            defer { self.observation = nil }
            return self.observation
        }
        observation?.invalidate()
    }

    fileprivate func send(_ value: S.Input) {
        lock.lock()
        guard let subscriber, demand > 0 else {
            lock.unlock()
            return
        }
        demand -= 1
        lock.unlock()
        let additional = subscriber.receive(value)
        if additional > 0 {
            lock.withLock { demand += additional }
        }
    }
}

/// Hands an observation's values to a subscription without keeping the subscription alive.
///
/// A `Sendable` value with a method rather than a closure, so that no closure captures the
/// metatype of the subscriber.
private struct WeakSender<S: Subscriber>: Sendable where S.Failure == Never {
    weak var subscription: ObservationSubscription<S>?

    func send(_ value: S.Input) {
        subscription?.send(value)
    }
}
