import DefaultsPropertyList
import Foundation

/// A suite whose values are a ``SuiteStore``: every change of its domains is an edit applied by
/// ``edit(_:tellsChanges:)`` (or, under the suite's locks,
/// ``editHoldingLocks(_:into:tellsChanges:isPersistedByCaller:)``), which the suite's backend
/// persists and the store then delivers.
package protocol StoreBackedSuite: EditableSuite {
    var store: SuiteStore { get }

    /// Called after an edit changed persistent values, before its change is delivered: a
    /// backend that persists schedules the write.
    func persist(_ outcome: SuiteEdit.Outcome)

    /// Applies the edit `decide` makes on the store's values as they are then (`nil`: none), with
    /// no other writer of the suite's storage between the decision and the edit: what a
    /// migration needs, so that two processes starting on one old file migrate it once.
    ///
    /// By default `decide` runs at once, holding no lock, and its edit is applied as
    /// ``edit(_:tellsChanges:)`` applies it (only this process writes the store). A backend whose
    /// storage other processes share runs it holding its locks, on the storage as they left it,
    /// and persists the edit before returning (``FileSuite``), or does not run it when it could not
    /// take them (and reports why).
    func editExclusively(_ decide: (SuiteStore) -> SuiteEdit?)
}

extension StoreBackedSuite {
    package var storeBacked: (any StoreBackedSuite)? { self }

    package func editExclusively(_ decide: (SuiteStore) -> SuiteEdit?) {
        if let decided = decide(store) {
            edit(decided)
        }
    }

    /// The one path of every change of the suite's domains: the store applies `edit` and decides
    /// what it changed, the backend persists it, then the store posts it (with the edit's own
    /// origin) and reports what it refused, with no lock held.
    @discardableResult
    func edit(_ edit: SuiteEdit, tellsChanges: Bool = true) -> SuiteEdit.Outcome {
        store.holdingLocks { held in
            editHoldingLocks(edit, into: &held, tellsChanges: tellsChanges)
        }
    }

    /// ``edit(_:tellsChanges:)`` for a caller that holds a lock of the suite (a reload, a write
    /// holding the file's lock): applied and persisted now, and kept in `held`, which
    /// ``SuiteStore/holdingLocks(_:)`` delivers once no lock is held, so that observers may
    /// write, flush or reload.
    ///
    /// - Parameter isPersistedByCaller: The edit runs inside the backend's own write
    ///   (``FileSuite/synchronize(editing:)``), which persists it before it returns.
    @discardableResult
    func editHoldingLocks(
        _ edit: SuiteEdit, into held: inout HeldEdits, tellsChanges: Bool = true, isPersistedByCaller: Bool = false
    ) -> SuiteEdit.Outcome {
        let outcome = store.apply(edit, tellsChanges: tellsChanges)
        if outcome.isPersistable, !isPersistedByCaller {
            persist(outcome)
        }
        held.append(outcome)
        return outcome
    }

    package func apply(_ values: some Collection<(key: String, value: PropertyListValue?)>) {
        if values.count == 1, let (key, value) = values.first {
            // Telling whether the value changed costs two lookups and a comparison; skipped when
            // nobody listens. (An observer added during this write may miss it, as it would if
            // it had been added just after.)
            edit(.set(key, value), tellsChanges: changes.observerCount > 0)
        } else {
            edit(.setValues(Array(values)))
        }
    }

    package func report(_ problem: DefaultsError) {
        store.report(problem)
    }

    package var problemFileURL: URL? { store.fileURL }
}
