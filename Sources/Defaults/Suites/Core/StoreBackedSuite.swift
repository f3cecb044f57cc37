import DefaultsPropertyList
import Foundation

/// A suite whose values are a ``SuiteStore``: every change of its domains is an edit applied by
/// ``edit(_:tellsChanges:)``, which the suite's backend persists and the store then delivers.
package protocol StoreBackedSuite: EditableSuite {
    var store: SuiteStore { get }

    /// Called after an edit changed persistent values, before its change is delivered: a
    /// backend that persists schedules the write.
    func persist(_ outcome: SuiteEdit.Outcome)
}

extension StoreBackedSuite {
    /// Applies `edit`, has it persisted, then posts and reports it with no lock held.
    @discardableResult
    func edit(_ edit: SuiteEdit, tellsChanges: Bool = true) -> SuiteEdit.Outcome {
        let outcome = store.apply(edit, tellsChanges: tellsChanges)
        if outcome.isPersistable {
            persist(outcome)
        }
        store.deliver(outcome)
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
