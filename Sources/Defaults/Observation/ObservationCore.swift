import Synchronization

/// The engine under every observation API (``Defaults/observe(_:options:handler:)``,
/// ``Defaults/updates(_:initial:)->Defaults.Updates<Value>``, the publishers): it watches a set of keys through their suites'
/// change centers and turns posts into an ordered series of ``ObservedChange`` values.
///
/// Guarantees, for one core:
/// - `deliver` is never called concurrently with itself, nor reentrantly. A change posted while a
///   delivery is running (on another thread, or by the delivered code itself) is queued and
///   delivered by the thread that is delivering, right after the current call returns; changes
///   queued meanwhile are delivered as one, from the value delivered last to the latest, so that
///   observers that write each other's keys never replay stale values at each other, and the
///   series ends. Otherwise `deliver` runs on the thread that made the change.
/// - A change is delivered only when what the keys read differs from what the last delivery
///   carried, so each change reaches the observer once, and `old` is always the previous `new`.
/// - The initial value, when asked for, is delivered before any change, and before ``start(initial:)``
///   returns.
final class ObservationCore: ObservationHandle {
    private struct Registration: Sendable {
        let center: SuiteChangeCenter
        let token: SuiteChangeCenter.Token
    }

    private struct State {
        var last: ObservedValues?
        var pending: [ObservedChange] = []
        var isDelivering = false
        var isInvalidated = false
        var registrations: [Registration] = []
        var tie: LifetimeTie?
    }

    let keys: ObservedKeys
    private let deliver: @Sendable (ObservedChange) -> Void
    private let state = Mutex(State())
    // Lock-free copies of two flags, read on every post by the change centers' liveness checks.
    private let isInvalidatedFlag = Atomic(false)
    private let hasEverBeenTied = Atomic(false)

    /// Whether whoever the core delivers to still wants changes (a ``KeyBroadcast``'s observers,
    /// some of which may be tied to objects); asked with the core's own liveness checks.
    private let isWanted: (@Sendable () -> Bool)?

    init(
        keys: ObservedKeys, isWanted: (@Sendable () -> Bool)? = nil,
        deliver: @escaping @Sendable (ObservedChange) -> Void
    ) {
        self.keys = keys
        self.isWanted = isWanted
        self.deliver = deliver
    }

    deinit {
        invalidate()
    }

    /// Whether the core still delivers changes.
    var isValid: Bool {
        !isInvalidatedFlag.load(ordering: .acquiring)
    }

    /// Reads the keys, registers with their suites and, when `initial`, delivers what they read
    /// before returning.
    func start(initial: Bool) {
        state.withLock { state in
            let current = keys.read()
            state.last = current
            if initial {
                state.pending.append(ObservedChange(isInitial: true, old: current, new: current))
            }
            // This thread delivers everything queued until `start` returns, the initial value first.
            state.isDelivering = true
        }
        var registrations: [Registration] = []
        for group in keys.bySuite {
            let center = group.suite.changes
            let token = center.addObserver(
                forKeys: group.names,
                isAlive: { [weak self] in self?.checkAlive() ?? false },
                { [weak self] _ in self?.changed() }
            )
            registrations.append(Registration(center: center, token: token))
        }
        let unneeded = state.withLock { state -> [Registration] in
            guard !state.isInvalidated else { return registrations }
            state.registrations = registrations
            // A change made between the first read and the registration reached no observer.
            enqueueIfChanged(&state)
            return []
        }
        for registration in unneeded {
            registration.center.removeObserver(registration.token)
        }
        drain()
    }

    /// Stops delivering and unregisters from the suites. Calling it again does nothing.
    func invalidate() {
        let (registrations, tie) = state.withLock { state -> ([Registration], LifetimeTie?) in
            guard !state.isInvalidated else { return ([], nil) }
            state.isInvalidated = true
            isInvalidatedFlag.store(true, ordering: .releasing)
            defer {
                state.registrations = []
                state.tie = nil
                state.pending = []
            }
            return (state.registrations, state.tie)
        }
        for registration in registrations {
            registration.center.removeObserver(registration.token)
        }
        // Released here, outside the lock: it may be the last reference to the owner.
        withExtendedLifetime(tie) {}
    }

    /// Keeps `owner` (and so this core) alive for as long as `object` is, and invalidates the core
    /// once `object` is gone.
    func tie(to object: AnyObject, owner: AnyObject & Sendable) {
        let tie = LifetimeTie(object: WeakReference(object), owner: owner)
        let previous = state.withLock { state -> LifetimeTie? in
            guard !state.isInvalidated else { return nil }
            hasEverBeenTied.store(true, ordering: .releasing)
            defer { state.tie = tie }
            return state.tie
        }
        withExtendedLifetime(previous) {}
    }

    /// Undoes ``tie(to:owner:)``; if the tied object is already gone, the core is invalidated.
    func removeTie() {
        let (previous, objectIsGone) = state.withLock { state -> (LifetimeTie?, Bool) in
            defer { state.tie = nil }
            return (state.tie, state.tie.map { $0.object.isGone } ?? false)
        }
        if objectIsGone {
            invalidate()
        }
        withExtendedLifetime(previous) {}
    }

    /// Whether the core is valid and, if tied, its object alive; invalidates it when the object is gone.
    func checkAlive() -> Bool {
        guard isValid else { return false }
        if let isWanted, !isWanted() {
            invalidate()
            return false
        }
        guard hasEverBeenTied.load(ordering: .acquiring) else { return true }
        let objectIsGone = state.withLock { state in state.tie.map { $0.object.isGone } ?? false }
        if objectIsGone {
            invalidate()
            return false
        }
        return true
    }

    /// Called by the change centers for every post about one of the keys.
    private func changed() {
        let shouldDeliver = state.withLock { state -> Bool in
            guard !state.isInvalidated else { return false }
            enqueueIfChanged(&state)
            guard !state.isDelivering, !state.pending.isEmpty else { return false }
            state.isDelivering = true
            return true
        }
        if shouldDeliver {
            drain()
        }
    }

    /// Queues a change if the keys read differently from the last queued value, merged with a
    /// change queued and not delivered yet. Reading under the lock keeps the series monotonic: each
    /// read sees the suites at least as late as the previous.
    private func enqueueIfChanged(_ state: inout State) {
        guard let last = state.last else { return }
        let current = keys.read()
        guard !current.isSameValue(as: last) else { return }
        state.last = current
        if let queued = state.pending.last, !queued.isInitial {
            state.pending[state.pending.count - 1] = ObservedChange(isInitial: false, old: queued.old, new: current)
            // Back where the last delivery left it: nothing to tell.
            if queued.old.isSameValue(as: current) {
                state.pending.removeLast()
            }
        } else {
            state.pending.append(ObservedChange(isInitial: false, old: last, new: current))
        }
    }

    /// Delivers queued changes until none is left; only the thread that set `isDelivering` runs it.
    private func drain() {
        while true {
            let next = state.withLock { state -> ObservedChange? in
                guard !state.isInvalidated, !state.pending.isEmpty else {
                    state.pending = []
                    state.isDelivering = false
                    return nil
                }
                return state.pending.removeFirst()
            }
            guard let next, checkAlive() else { return }
            deliver(next)
        }
    }
}

/// An observation's tie to the lifetime of another object.
struct LifetimeTie: Sendable {
    let object: WeakReference
    /// The object that owns the observation (an ``Defaults/KeyObservation``), kept alive by the tie.
    let owner: AnyObject & Sendable
}

/// A weak reference to an object that is only ever tested for being alive.
///
/// `@unchecked Sendable`: the object is never used through this reference, only compared with
/// `nil`, so sharing the reference between threads cannot race on the object's state; weak
/// references themselves are safe to load from any thread.
struct WeakReference: @unchecked Sendable {
    private weak var object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }

    var isGone: Bool {
        object == nil
    }
}
