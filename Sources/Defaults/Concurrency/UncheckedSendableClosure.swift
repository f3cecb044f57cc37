/// A closure the caller gave without `Sendable`, which the library calls from another thread, as
/// the Defaults library does.
///
/// Defaults' `observe` handlers and dynamic default values are plain `@escaping` closures, which
/// it stores and calls on whatever thread makes a change or reads the key; taking them the same way
/// is what lets code written for Defaults (a handler that sets the observing object's own
/// properties, a default computed from non-`Sendable` state) compile unchanged in Swift 6 mode.
///
/// `@unchecked Sendable` because the compiler cannot check this: the caller takes on what the
/// documentation of each such parameter says, that the closure runs on the thread that made the
/// change or the read. A closure that must run on an actor hops to it itself.
struct UncheckedSendableClosure<Input, Output>: @unchecked Sendable {
    private let body: (Input) -> Output

    init(_ body: @escaping (Input) -> Output) {
        self.body = body
    }

    /// Calls the closure. A method of a `Sendable` value, so that `box.call` is a `@Sendable`
    /// function without a closure that captures the metatypes of `Input` and `Output`.
    func call(_ input: Input) -> Output {
        body(input)
    }
}

extension UncheckedSendableClosure where Input == Void {
    init(_ body: @escaping () -> Output) {
        self.body = { _ in body() }
    }

    /// Calls the closure; see ``call(_:)``.
    func call() -> Output {
        body(())
    }
}
