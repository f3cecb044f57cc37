import Foundation

/// What edits applied while a suite's locks were held changed, and the problems met meanwhile:
/// delivered together by ``SuiteStore/holdingLocks(_:)`` once the locks are released, so that
/// observers and problem handlers may write, flush or reload.
///
/// An edit applied under a lock goes through ``StoreBackedSuite/editHoldingLocks(_:into:tellsChanges:isPersistedByCaller:)``,
/// which needs one of these, and only ``SuiteStore`` makes them: a change made holding a lock
/// cannot be left unposted.
package struct HeldEdits: Sendable {
    /// Reported first, in order.
    fileprivate var problems: [DefaultsError] = []
    /// Posted after the problems, in the order they were applied: the first kept inline, since
    /// most holders apply one edit and a write should not allocate for it.
    fileprivate var first: SuiteEdit.Outcome?
    fileprivate var more: [SuiteEdit.Outcome] = []

    fileprivate init() {}

    /// Keeps `outcome` to post once the locks are released.
    mutating func append(_ outcome: SuiteEdit.Outcome) {
        // Nothing to post or report: a write nobody listens to.
        guard !outcome.changed.isEmpty || !outcome.managed.isEmpty else { return }
        if first == nil {
            first = outcome
        } else {
            more.append(outcome)
        }
    }

    /// Keeps `problem` to report (record, log, tell the handler) once the locks are released.
    mutating func report(_ problem: DefaultsError) {
        problems.append(problem)
    }
}

extension SuiteStore {
    /// Runs `body`, which takes the suite's locks and applies edits into the ``HeldEdits`` it is
    /// given, then reports the problems and posts the changes it kept, holding no lock: the one
    /// delivery of a change made under a lock. Called again from inside `body` on the same thread
    /// (an observer that writes), the inner edits are delivered when the inner call returns.
    func holdingLocks<Result, Failure: Error>(
        _ body: (inout HeldEdits) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var held = HeldEdits()
        defer { deliver(held) }
        return try body(&held)
    }

    /// ``holdingLocks(_:)`` for a write whose caller releases its locks later than `body` returns
    /// (the write scheduler's): `deliver` is handed to it to run then.
    func holdingLocksUntilLater<Result>(
        _ body: (inout HeldEdits) -> Result
    ) -> (result: Result, deliver: @Sendable () -> Void) {
        var held = HeldEdits()
        let result = body(&held)
        return (result, { [held] in self.deliver(held) })
    }

    private func deliver(_ held: HeldEdits) {
        for problem in held.problems {
            report(problem)
        }
        if let first = held.first {
            deliver(first)
        }
        for outcome in held.more {
            deliver(outcome)
        }
    }

    /// Reports the writes `outcome` refused, then posts what it changed.
    private func deliver(_ outcome: SuiteEdit.Outcome) {
        for key in outcome.managed {
            let file = managedFile(key)
            report(
                DefaultsError(
                    suite: name, kind: .managedKey, key: key, fileURL: file,
                    message: "the key \"\(key)\" is managed by the administrator in \(file?.path ?? "a managed file"); "
                        + "the write changed nothing"))
        }
        if !outcome.changed.isEmpty {
            changes.post(SuiteChange(keys: outcome.changed, origin: outcome.origin))
        }
    }
}
