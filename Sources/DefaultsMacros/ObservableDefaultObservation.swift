import Defaults
import Synchronization

/// The observation behind one ``ObservableDefault(_:)`` property: it forwards every change of the
/// key's value, whatever made it, to the owning object's observation registrar.
///
/// The macro declares one as a private peer of the property and starts it from the property's
/// getter; you do not use it directly. It is public, with ``init()`` and
/// ``start(observing:for:keyPath:notify:)``, only because that expansion is compiled in your
/// module; the rest is internal to the library. It holds the object weakly and stops observing
/// when it is released (which happens with the object that owns it).
public final class ObservableDefaultObservation: Sendable {
    private struct Registration: Sendable {
        let center: SuiteChangeCenter
        let token: SuiteChangeCenter.Token
    }

    private let isStarted = Atomic(false)
    private let registration = Mutex<Registration?>(nil)

    /// Creates an observation that has not started.
    public init() {}

    deinit {
        if let registration = registration.withLock({ $0 }) {
            registration.center.removeObserver(registration.token)
        }
    }

    /// Starts observing `key` for `object` unless already started: after this, each change of the
    /// value a read of `key` returns calls `notify` with the object and `keyPath`, on the thread
    /// of the change, for as long as the object lives.
    ///
    /// Cheap once started (one atomic load), so the getter calls it on every read.
    ///
    /// - Parameters:
    ///   - key: The key the property stands for.
    ///   - object: The object that owns the property; held weakly.
    ///   - keyPath: The property's key path, formed where the property may be referenced (the
    ///     getter), used only as the identity `withMutation(keyPath:_:)` reports.
    ///   - notify: Must only report a mutation to the object's observation registrar (the macro
    ///     passes `{ object, keyPath in object.withMutation(keyPath: keyPath) {} }`): it is called
    ///     from whatever thread made the change, and the registrar is the part of the object that
    ///     is safe to use from any thread.
    public func start<Object: AnyObject, Value: Defaults.Serializable, Member>(
        observing key: Defaults.Key<Value>,
        for object: Object,
        keyPath: KeyPath<Object, Member>,
        notify: @escaping @Sendable (Object, KeyPath<Object, Member>) -> Void
    ) {
        guard !isStarted.load(ordering: .acquiring) else { return }
        let target = MutationTarget(object: object, keyPath: keyPath, notify: notify)
        let center = key.suite.changes
        let name = key.name
        registration.withLock { registration in
            guard registration == nil else { return }
            let token = center.addObserver(forKeys: [name], isAlive: { target.isAlive }) { _ in
                target.notify()
            }
            registration = Registration(center: center, token: token)
            isStarted.store(true, ordering: .releasing)
        }
    }
}

/// The object that owns an ``ObservableDefaultObservation`` (held weakly), the key path of its
/// property and the closure that reports a mutation of it.
///
/// `@unchecked Sendable`: neither the object (which may be isolated to an actor) nor a key path to
/// one of its properties is `Sendable` in general. Here the object is only ever handed to
/// `notify`, which by the contract of
/// ``ObservableDefaultObservation/start(observing:for:keyPath:notify:)`` only calls the object's
/// `nonisolated` `withMutation(keyPath:_:)` with an empty mutation: that touches only the object's
/// `ObservationRegistrar`, which is `Sendable` and thread-safe. The key path is immutable and is
/// only used as the identity of the property that changed, never to read or write it. Loading a
/// weak reference is safe from any thread.
private struct MutationTarget<Object: AnyObject, Member>: @unchecked Sendable {
    weak var object: Object?
    let keyPath: KeyPath<Object, Member>
    let report: @Sendable (Object, KeyPath<Object, Member>) -> Void

    init(
        object: Object, keyPath: KeyPath<Object, Member>,
        notify: @escaping @Sendable (Object, KeyPath<Object, Member>) -> Void
    ) {
        self.object = object
        self.keyPath = keyPath
        self.report = notify
    }

    var isAlive: Bool {
        object != nil
    }

    func notify() {
        if let object {
            report(object, keyPath)
        }
    }
}
