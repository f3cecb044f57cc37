/// What every observation is, as in the Defaults library: a class that can be invalidated and tied
/// to an object's lifetime. Spelled ``Defaults/Observation``; code keeps observations of any kind
/// as `[any Defaults.Observation]` (or `[Defaults.Observation]`).
public protocol _DefaultsObservation: AnyObject, Sendable {
    /// Whether the handler can still be called (an addition to the Defaults library's protocol).
    var isValid: Bool { get }

    /// Stops the observation: its handler is not called again.
    func invalidate()

    /// Keeps this observation alive for as long as, and no longer than, `weaklyHeldObject`.
    @discardableResult
    func tieToLifetime(of weaklyHeldObject: AnyObject) -> Self

    /// Breaks the tie made by ``tieToLifetime(of:)``, if there is one.
    func removeLifetimeTie()
}

extension Defaults {
    /// An observation, as the Defaults library names it: what ``KeyObservation`` (the type
    /// ``Defaults/observe(_:options:handler:)`` returns) conforms to.
    public typealias Observation = _DefaultsObservation

    /// A running observation made by ``Defaults/observe(_:options:handler:)`` or
    /// ``Defaults/observe(keys:options:handler:)-(Defaults.Keys...,_,_)``.
    ///
    /// Keep a reference for as long as you want the handler called: like the Defaults library on
    /// Apple platforms (and KVO), an observation that is no longer referenced is invalidated. To
    /// keep one running without storing it, tie it to the lifetime of an object:
    ///
    /// ```swift
    /// final class Player {
    ///     init() {
    ///         Defaults.observe(.volume) { change in
    ///             print("Volume is now", change.newValue)
    ///         }
    ///         .tieToLifetime(of: self)
    ///     }
    /// }
    /// ```
    public final class KeyObservation: Observation {
        let core: any ObservationHandle

        init(core: any ObservationHandle) {
            self.core = core
        }

        deinit {
            core.invalidate()
        }

        /// Whether the handler can still be called: `false` after ``invalidate()``, or once the
        /// object the observation is tied to is gone.
        public var isValid: Bool {
            core.checkAlive()
        }

        /// Stops the observation: the handler is not called again (a call already running on
        /// another thread finishes), and the suites no longer hold it. Calling it again does nothing.
        public func invalidate() {
            core.invalidate()
        }

        /// Keeps this observation alive for as long as, and no longer than, `weaklyHeldObject`.
        ///
        /// The object is held weakly. Once it is gone, the handler is not called again, and the
        /// observation (with everything its handler captured) is released the next time its suite
        /// posts a change or counts its observers. Tying again replaces the previous tie.
        ///
        /// ```swift
        /// Defaults.observe(.volume) { [weak self] change in
        ///     self?.volumeDidChange(change.newValue)
        /// }
        /// .tieToLifetime(of: self)
        /// ```
        @discardableResult
        public func tieToLifetime(of weaklyHeldObject: AnyObject) -> Self {
            core.tie(to: weaklyHeldObject, owner: self)
            return self
        }

        /// Breaks the tie made by ``tieToLifetime(of:)``, if there is one.
        ///
        /// Afterwards the observation lives as long as a reference to it does, as if it had never
        /// been tied. If the tied object is already gone, the observation is invalidated.
        public func removeLifetimeTie() {
            core.removeTie()
        }
    }

    /// When an observation is first told about a value.
    public enum ObservationOption: Sendable, Hashable {
        /// Call the handler with the current value (``KeyChange/isInitial`` set, `oldValue` equal to
        /// `newValue`) before the `observe` call returns, and before any change.
        case initial

        /// The spelling Defaults uses for an initial value that must arrive before `observe`
        /// returns. Here ``initial`` already guarantees that, so the two are the same; both
        /// are accepted so that code written for Defaults builds unchanged.
        case prioritizedInitial
    }

    /// A set of ``ObservationOption`` values. The empty set means: only changes, no initial value.
    public typealias ObservationOptions = Set<ObservationOption>
}

extension Defaults.ObservationOptions {
    var wantsInitial: Bool {
        contains(.initial) || contains(.prioritizedInitial)
    }
}

/// What an ``Defaults/KeyObservation`` controls: an ``ObservationCore``, or one observer of a
/// ``KeyBroadcast``.
protocol ObservationHandle: Sendable {
    func invalidate()
    /// Whether it still delivers; invalidates it when its tied object is gone.
    func checkAlive() -> Bool
    func tie(to object: AnyObject, owner: AnyObject & Sendable)
    func removeTie()
}
