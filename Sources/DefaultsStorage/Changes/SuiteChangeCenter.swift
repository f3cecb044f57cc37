import Synchronization

/// The change stream of one suite: a registry of observers that every change is posted to.
///
/// Suites post here; every observation API of the library (``Defaults/updates(_:initial:)->Defaults.Updates<Value>``,
/// ``Defaults/observe(_:options:handler:)``, publishers, property wrappers, snapshots) is built on it.
///
/// A suite of your own creates one, returns it from ``DefaultsSuite/changes`` and calls ``post(_:)``
/// with each change. ``addObserver(forKeys:_:)`` hears every change of a suite, of keys declared
/// or not (as `defaults watch` does); to observe keys, use the observation APIs above.
///
/// Handlers run synchronously on the thread that made the change (for changes made by another
/// process, on the suite's watcher queue). They must not block. Suites post only when the value a
/// read returns actually changed, and never while holding a lock of their own, so a handler may
/// read and write the suite.
public final class SuiteChangeCenter: Sendable {
    /// Identifies a registered observer, to remove it.
    public struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Observer {
        let keys: Set<String>?
        let handler: @Sendable (SuiteChange) -> Void
        let isAlive: (@Sendable () -> Bool)?
    }

    private struct State {
        var nextID: UInt64 = 0
        var observers: [UInt64: Observer] = [:]
    }

    private let state = Mutex(State())
    /// Run once, when the first observer registers (``whenFirstObserved(_:)``).
    private let firstObserverHook = Mutex<(@Sendable () -> Void)?>(nil)
    /// `state.observers.count`, readable without the lock: a write asks whether anyone listens.
    private let registeredCount = Atomic<Int>(0)
    /// The suite of this library that made this center (``belongs(to:)``), held weakly: the suite
    /// holds its center.
    private let owner = Mutex(Owner())

    private struct Owner {
        weak var suite: (any EditableSuite)?
    }

    /// Creates an empty change center.
    public init() {}

    /// Records `suite`, a suite of this library, as the one this center is the change stream of:
    /// called once, as the suite opens, before another thread can see it.
    package func belongs(to suite: any EditableSuite) {
        owner.withLock { $0.suite = suite }
    }

    /// `suite` as a ``SuiteBackend`` when it is the suite of this library this center belongs to;
    /// `nil` for an application's suite, also one that hands out a library suite's center.
    ///
    /// What ``DefaultsSuite/backend`` asks instead of a protocol cast, whose first conformance
    /// lookup in a process (some 0.2 ms) would fall on every program's start: a key's declaration
    /// asks the backend of its suite.
    package func backend(of suite: any DefaultsSuite) -> (any SuiteBackend)? {
        guard let owner = owner.withLock({ $0.suite }), owner === suite else { return nil }
        return owner
    }

    /// Registers `handler` for changes to any of `keys` (all keys when `nil`), until
    /// ``removeObserver(_:)``.
    ///
    /// - Parameters:
    ///   - keys: The keys whose changes the handler is told about; every key when `nil`.
    ///   - handler: Called with each change that concerns `keys`.
    /// - Returns: The token that removes the observer.
    public func addObserver(
        forKeys keys: Set<String>? = nil,
        _ handler: @escaping @Sendable (SuiteChange) -> Void
    ) -> Token {
        register(keys: keys, isAlive: nil, handler)
    }

    /// Registers `handler` for changes to any of `keys` (all keys when `nil`) for as long as
    /// `isAlive` returns `true`: the library's observations, tied to the lifetime of an object
    /// that nothing tells them is gone.
    ///
    /// - Parameters:
    ///   - keys: The keys whose changes the handler is told about; every key when `nil`.
    ///   - isAlive: Asked (outside any lock of the center) before each call of `handler` and
    ///     whenever observers are counted; the first time it returns `false`, the observer is
    ///     removed without being called.
    ///   - handler: Called with each change that concerns `keys`.
    /// - Returns: The token that removes the observer.
    package func addObserver(
        forKeys keys: Set<String>? = nil,
        isAlive: @escaping @Sendable () -> Bool,
        _ handler: @escaping @Sendable (SuiteChange) -> Void
    ) -> Token {
        register(keys: keys, isAlive: isAlive, handler)
    }

    private func register(
        keys: Set<String>?,
        isAlive: (@Sendable () -> Bool)?,
        _ handler: @escaping @Sendable (SuiteChange) -> Void
    ) -> Token {
        let token = state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = Observer(keys: keys, handler: handler, isAlive: isAlive)
            registeredCount.store(state.observers.count, ordering: .relaxed)
            return Token(id: state.nextID)
        }
        let hook = firstObserverHook.withLock { hook in
            defer { hook = nil }
            return hook
        }
        hook?()
        return token
    }

    /// Runs `hook` once, on the thread of the first observer to register (before that
    /// registration returns): a suite begins there the work only observers need, such as watching
    /// its file for other processes' changes.
    func whenFirstObserved(_ hook: @escaping @Sendable () -> Void) {
        firstObserverHook.withLock { $0 = hook }
    }

    /// Removes an observer; removing one twice does nothing.
    public func removeObserver(_ token: Token) {
        state.withLock { state in
            state.observers.removeValue(forKey: token.id)
            registeredCount.store(state.observers.count, ordering: .relaxed)
        }
    }

    /// The number of registered observers that are still alive.
    ///
    /// Observers whose `isAlive` check fails are removed first, so once every observation of a
    /// suite is gone (invalidated, dropped, cancelled, or tied to an object that was released),
    /// this is `0`. Suites ask it to skip work nobody would see; tests ask it to show that
    /// nothing is left observing.
    package var observerCount: Int {
        guard registeredCount.load(ordering: .relaxed) > 0 else { return 0 }
        let checks = state.withLock { state in
            state.observers.compactMap { id, observer in observer.isAlive.map { (id, $0) } }
        }
        let dead = checks.filter { !$0.1() }.map(\.0)
        return state.withLock { state in
            for id in dead {
                state.observers.removeValue(forKey: id)
            }
            registeredCount.store(state.observers.count, ordering: .relaxed)
            return state.observers.count
        }
    }

    /// Tells every interested observer about `change`, in the order they were registered, unless
    /// the caller is inside ``Defaults/withoutPropagation(_:)``.
    public func post(_ change: SuiteChange) {
        guard !change.keys.isEmpty, !StorageEnvironment.isPropagationSuppressed else { return }
        let targets = state.withLock { state -> [(id: UInt64, observer: Observer)] in
            guard !state.observers.isEmpty else { return [] }
            return state.observers.compactMap { id, observer in
                if let keys = observer.keys, keys.isDisjoint(with: change.keys) {
                    return nil
                }
                return (id, observer)
            }
            .sorted { $0.id < $1.id }
        }
        var dead: [UInt64] = []
        for target in targets {
            if let isAlive = target.observer.isAlive, !isAlive() {
                dead.append(target.id)
                continue
            }
            target.observer.handler(change)
        }
        if !dead.isEmpty {
            state.withLock { state in
                for id in dead {
                    state.observers.removeValue(forKey: id)
                }
                registeredCount.store(state.observers.count, ordering: .relaxed)
            }
        }
    }
}
