import Synchronization

/// The observers of one key made with ``Defaults/observe(_:options:handler:)`` share one
/// broadcast: one registration with the suite, and one read, comparison and decode per change,
/// however many observers there are.
///
/// It keeps each observer's guarantees of ``ObservationCore``, which it is built on: deliveries
/// in order, never concurrent nor reentrant for an observer, the initial value before `observe`
/// returns, and `old` always the previous `new`. An observer that joins while a change is being
/// delivered gets the changes that arrive before it has joined from its own thread, after its
/// initial value.
///
/// Only for values with value semantics: observers of a class type each get their own decoded
/// instance from their own ``ObservationCore``.
final class KeyBroadcast<Value: Defaults.Serializable>: Sendable {

    /// One observer.
    final class Subscriber: Sendable {
        let handler: @Sendable (Defaults.KeyChange<Value>) -> Void
        let isValid = Atomic(true)
        private let hasEverBeenTied = Atomic(false)
        private let tie = Mutex<LifetimeTie?>(nil)
        /// Held strongly until the observer leaves: a broadcast is otherwise held only by its key
        /// while it has observers, and a key may drop it while an observer is joining.
        fileprivate let broadcast: KeyBroadcast

        init(broadcast: KeyBroadcast, handler: @escaping @Sendable (Defaults.KeyChange<Value>) -> Void) {
            self.broadcast = broadcast
            self.handler = handler
        }
    }

    private struct State {
        /// Observers that have joined, in the order they joined.
        var active: [Subscriber] = []
        /// Observers still joining, with the changes that came meanwhile.
        var joining: [ObjectIdentifier: [Defaults.KeyChange<Value>]] = [:]
        /// The new value of the last change delivered: what every active observer saw last.
        var last: Value?
        var core: ObservationCore?
        /// Advanced when the core is dropped, so that a late delivery of an old core is ignored.
        var epoch = 0
    }

    let key: Defaults.Key<Value>
    private let reader: KeyValueReader<Value>
    private let state = Mutex(State())
    /// Held while the core is made and started, so that a joiner never sees it half started.
    private let setup = Mutex(())
    /// Whether an observer was ever tied to an object's lifetime.
    fileprivate let hasTiedSubscribers = Atomic(false)

    /// Whether observers of `Value` can share decoded values.
    static var isUsable: Bool {
        !ReferenceSemantics.isPossible(in: Value.self)
    }

    init(key: Defaults.Key<Value>) {
        self.key = key
        reader = KeyValueReader(key)
    }

    /// Adds an observer; delivers the current value to it first when `initial`.
    func join(initial: Bool, handler: @escaping @Sendable (Defaults.KeyChange<Value>) -> Void) -> Subscriber {
        let subscriber = Subscriber(broadcast: self, handler: handler)
        let id = ObjectIdentifier(subscriber)
        let current = setup.withLock { _ -> CopiedValue<Value> in
            startIfNeeded()
            return state.withLock { state in
                state.joining[id] = []
                return CopiedValue(state.last ?? key.value(in: key.suite))
            }
        }.value
        if initial {
            handler(Defaults.KeyChange(oldValue: current, newValue: current, isInitial: true))
        }
        // Deliver what came while joining, until nothing is left; then deliveries come from the core.
        while true {
            let next = state.withLock { state -> CopiedValue<Defaults.KeyChange<Value>>? in
                guard var backlog = state.joining[id], !backlog.isEmpty else {
                    if state.joining.removeValue(forKey: id) != nil, subscriber.isValid.load(ordering: .acquiring) {
                        state.active.append(subscriber)
                    }
                    return nil
                }
                let first = backlog.removeFirst()
                state.joining[id] = backlog
                return CopiedValue(first)
            }?.value
            guard let next else { break }
            if subscriber.checkAlive() {
                handler(next)
            }
        }
        return subscriber
    }

    /// Makes and starts the core if there is none; runs under `setup`.
    private func startIfNeeded() {
        let start = state.withLock { state -> ObservationCore? in
            guard state.core == nil else { return nil }
            let delivery = BroadcastDelivery(broadcast: self, epoch: state.epoch)
            let core = ObservationCore(keys: reader.keys, isWanted: delivery.isWanted, deliver: delivery.deliver)
            state.core = core
            return core
        }
        // Its initial delivery sets `last`, before any change can be delivered.
        start?.start(initial: true)
    }

    /// Called by the core, one change at a time.
    fileprivate func deliver(_ change: ObservedChange, epoch: Int) {
        let newValue = reader.newValue(change)
        let sent = CopiedValue(newValue)
        let delivery = state.withLock {
            state -> CopiedValue<(targets: [Subscriber], change: Defaults.KeyChange<Value>)>? in
            guard state.epoch == epoch else { return nil }
            let old = state.last ?? sent.value
            state.last = sent.value
            guard !change.isInitial else { return nil }
            let keyChange = Defaults.KeyChange(oldValue: old, newValue: sent.value, isInitial: false)
            for id in state.joining.keys {
                state.joining[id]?.append(keyChange)
            }
            return CopiedValue((state.active, keyChange))
        }
        guard let delivery = delivery?.value else { return }
        for subscriber in delivery.targets where subscriber.checkAlive() {
            subscriber.handler(delivery.change)
        }
    }

    /// Whether an observer is left, once those tied to objects that are gone have been removed.
    /// Only tied observers can go without leaving, so the check is skipped until one was tied.
    fileprivate func hasLiveSubscribers() -> Bool {
        guard hasTiedSubscribers.load(ordering: .acquiring) else { return true }
        let subscribers = state.withLock { $0.active }
        // `checkAlive` makes an observer whose object is gone leave; the last one stops the core.
        let alive = subscribers.filter { $0.checkAlive() }
        return !alive.isEmpty || state.withLock { !$0.joining.isEmpty }
    }

    /// Removes an observer; the last one to leave stops the core.
    func leave(_ subscriber: Subscriber) {
        subscriber.isValid.store(false, ordering: .releasing)
        let id = ObjectIdentifier(subscriber)
        let core = state.withLock { state -> ObservationCore? in
            state.active.removeAll { $0 === subscriber }
            state.joining[id] = nil
            guard state.active.isEmpty, state.joining.isEmpty, let core = state.core else { return nil }
            state.core = nil
            state.last = nil
            state.epoch += 1
            return core
        }
        core?.invalidate()
        if core != nil {
            key.releaseBroadcast(self)
        }
    }
}

extension KeyBroadcast.Subscriber: ObservationHandle {
    func invalidate() {
        guard isValid.load(ordering: .acquiring) else { return }
        broadcast.leave(self)
        isValid.store(false, ordering: .releasing)
        let previous = tie.withLock { tie -> LifetimeTie? in
            defer { tie = nil }
            return tie
        }
        withExtendedLifetime(previous) {}
    }

    func checkAlive() -> Bool {
        guard isValid.load(ordering: .acquiring) else { return false }
        guard hasEverBeenTied.load(ordering: .acquiring) else { return true }
        let objectIsGone = tie.withLock { $0.map { $0.object.isGone } ?? false }
        if objectIsGone {
            invalidate()
            return false
        }
        return true
    }

    func tie(to object: AnyObject, owner: AnyObject & Sendable) {
        guard isValid.load(ordering: .acquiring) else { return }
        let new = LifetimeTie(object: WeakReference(object), owner: owner)
        hasEverBeenTied.store(true, ordering: .releasing)
        broadcast.hasTiedSubscribers.store(true, ordering: .releasing)
        let previous = tie.withLock { tie -> LifetimeTie? in
            defer { tie = new }
            return tie
        }
        withExtendedLifetime(previous) {}
    }

    func removeTie() {
        let (previous, objectIsGone) = tie.withLock { tie -> (LifetimeTie?, Bool) in
            defer { tie = nil }
            return (tie, tie.map { $0.object.isGone } ?? false)
        }
        if objectIsGone {
            invalidate()
        }
        withExtendedLifetime(previous) {}
    }
}

/// The broadcasts of the keys that have observers, by key: kept here, in the observation layer,
/// so that a key holds nothing of it. A broadcast holds its key, so an identifier in the table is
/// never reused by another key while its entry stays.
private let broadcasts = Mutex<[ObjectIdentifier: AnyObject]>([:])

extension Defaults.Key {
    /// The key's broadcast, made when the first observer comes.
    func broadcast() -> KeyBroadcast<Value> {
        broadcasts.withLock { table in
            if let existing = table[ObjectIdentifier(self)] as? KeyBroadcast<Value> {
                return existing
            }
            let made = KeyBroadcast(key: self)
            table[ObjectIdentifier(self)] = made
            return made
        }
    }

    /// Drops `broadcast` once its last observer has left (it holds the key: no cycle is kept).
    func releaseBroadcast(_ broadcast: KeyBroadcast<Value>) {
        let removed = broadcasts.withLock { table -> AnyObject? in
            guard table[ObjectIdentifier(self)] === broadcast else { return nil }
            return table.removeValue(forKey: ObjectIdentifier(self))
        }
        // Released outside the lock: it may be the key's last holder.
        withExtendedLifetime(removed) {}
    }
}

/// The core's delivery closure: a method of a `Sendable` value, so that no closure captures the
/// metatype of a `Value` that need not be `Sendable`.
private struct BroadcastDelivery<Value: Defaults.Serializable>: Sendable {
    weak var broadcast: KeyBroadcast<Value>?
    let epoch: Int

    func deliver(_ change: ObservedChange) {
        broadcast?.deliver(change, epoch: epoch)
    }

    func isWanted() -> Bool {
        broadcast?.hasLiveSubscribers() ?? false
    }
}
