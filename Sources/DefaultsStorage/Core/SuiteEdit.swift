import DefaultsPropertyList

/// A change to a suite's domains, whatever made it: the one input of ``SuiteStore/apply(_:)``,
/// which applies every kind under one lock, with one set of rules.
package enum SuiteEdit {
    /// A write of one persistent value by this process (`set`, `Defaults[key] =`, `Key.store`,
    /// `reset`); `nil` removes it. Refused when the administrator enforces the key.
    case set(String, PropertyListValue?)
    /// Several persistent values written by this process as one edit (`setValues`, a snapshot's
    /// transaction, `modify`, the `defaults` command); keys the administrator enforces are left
    /// out and the others applied, or the whole edit refused (``ManagedKeys``). For a key given
    /// twice, the last value wins.
    case setValues([(key: String, value: PropertyListValue?)])
    /// Every persistent value removed by this process.
    case removeAll
    /// Defaults declared in code, added to the registration domain.
    case register([String: PropertyListValue])
    /// The persistent values as the backend found them (another process wrote them); this
    /// process's changes not yet persisted stay on top.
    case load([String: PropertyListValue])
    /// The administrator's domains as their files now hold them.
    case administrator(vendor: [String: PropertyListValue], managed: [String: PropertyListValue])
    /// Values written elsewhere (another machine's, through the sync engine), each stored where
    /// the key still holds what its writer expected (a write made since is newer, and kept),
    /// beneath what the administrator enforces here; observers are told `origin`, and the
    /// backend's persist listeners are not told these keys as this process's changes.
    case conditional([ConditionalWrite], origin: SuiteChange.Origin)
    /// Values a persisting write could not store, put back to what the backend holds, where the
    /// key still holds the refused value and no newer change of this process is pending.
    case putBack([ConditionalWrite])
    /// Values keys' migrations move from former names (``Defaults/Migration``), each made where
    /// its former name still holds the value planned on and its new name holds none, beneath
    /// what the administrator enforces (the user's stored value moves, whatever is enforced).
    case migrated([KeyMove])

    /// Where observers are told the change came from.
    var origin: SuiteChange.Origin {
        switch self {
        case .set, .setValues, .removeAll, .register, .putBack, .migrated: .thisProcess
        case .load, .administrator: .otherProcess
        case .conditional(_, let origin): origin
        }
    }

    /// What a write of this process does when the administrator enforces some of its keys: an
    /// option of ``SuiteDomains/apply(_:tellsChanges:managedKeys:)``, which holds the rule.
    package enum ManagedKeys: Sendable {
        /// The library's: the enforced keys are left unwritten (and reported), the others written.
        case skip
        /// The `defaults` command's: nothing of the edit is written, so that the person who typed
        /// it is told before any of it takes effect.
        case refuseWholeEdit
    }

    /// What an edit did, kept in a ``HeldEdits`` that ``SuiteStore/holdingLocks(_:)`` posts and
    /// reports once no lock is held.
    package struct Outcome: Sendable {
        var origin: SuiteChange.Origin
        /// The keys whose value, as a read returns it, changed.
        var changed: Set<String> = []
        /// Keys the administrator enforces, left unwritten: each is reported as a problem. Under
        /// ``ManagedKeys/refuseWholeEdit``, any of them means the edit changed nothing.
        var managed: [String] = []
        /// Whether persistent values changed, for a backend to persist.
        var isPersistable = false
        /// The keys of ``SuiteEdit/conditional(_:origin:)`` writes stored; for ``SuiteEdit/migrated(_:)``, the
        /// names moves were made to.
        var stored: Set<String> = []
        /// The moves of a ``SuiteEdit/migrated(_:)`` edit that were made, in order.
        var moves: [KeyMove] = []
    }
}
