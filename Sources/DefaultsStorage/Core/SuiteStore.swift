import DefaultsPropertyList
import Foundation
import Synchronization

/// The store every suite of this library is built on: its domains and this process's changes not
/// yet persisted, behind one lock; its change stream; its problems.
///
/// ``apply(_:)`` is the one function that changes a suite's domains, whatever made the change (a
/// write through any door, `removeAll`, a registration, a value from another process, the
/// administrator or another machine): it applies the administrator's rule, updates the domains
/// and the pending changes under one lock and returns what changed; ``holdingLocks(_:)`` then
/// posts and reports it with no lock held, so that observers and problem handlers may write, flush or
/// reload. A suite reaches both through ``StoreBackedSuite/edit(_:tellsChanges:)``, so that what
/// changed is decided here and posted with the edit's own origin, whatever made it (a reload of
/// the file too). Values arrive converted (``SuiteWrite``). A suite type is a backend: it loads values
/// into its store and persists the pending changes (``FileSuite``), or keeps none (``InMemorySuite``).
package final class SuiteStore: Sendable {
    package struct State {
        package var domains: SuiteDomains
        /// This process's changes not yet persisted; kept only for a backend that persists them.
        var pending = PendingChanges()
    }

    let name: String
    /// The file the backend keeps its values in, named in problems; `nil` when none.
    package let fileURL: URL?
    let changes = SuiteChangeCenter()
    let problems = SuiteProblems()
    /// Advanced by the domains on every change; read without the lock (``DefaultsSuite/valueGeneration``).
    let generation: SuiteGeneration
    private let state: Mutex<State>
    private let keepsPending: Bool
    /// Told before the backend persists pending changes (``willPersist(_:)``).
    private let persistListeners = Mutex<(next: Int, listeners: [Int: PersistListener])>((0, [:]))
    /// The administrator's file that enforces a key, named in the problem of a refused write.
    let managedFile: @Sendable (String) -> URL?

    init(
        name: String, fileURL: URL? = nil, domains: SuiteDomains, keepsPending: Bool,
        managedFile: @escaping @Sendable (String) -> URL? = { _ in nil }
    ) {
        self.name = name
        self.fileURL = fileURL
        self.generation = domains.generation
        self.state = Mutex(State(domains: domains))
        self.keepsPending = keepsPending
        self.managedFile = managedFile
    }

    // MARK: Reading

    func value(forKey key: String) -> PropertyListValue? {
        state.withLock { $0.domains.value(forKey: key) }
    }

    /// Reads the domains (and pending changes) under the lock.
    package func read<Result>(_ body: (borrowing State) -> Result) -> Result {
        state.withLock { body($0) }
    }

    var persistent: [String: PropertyListValue] { state.withLock { $0.domains.persistent } }

    var hasPending: Bool { state.withLock { !$0.pending.isEmpty } }

    // MARK: Changing

    /// Applies `edit` to the domains and records what it changed of the persistent values as
    /// pending; returns what changed, for ``holdingLocks(_:)`` to deliver once no lock is held. `tellsChanges:
    /// false` skips telling which keys changed, when nobody listens.
    func apply(_ edit: SuiteEdit, tellsChanges: Bool = true) -> SuiteEdit.Outcome {
        state.withLock { state in
            let outcome: SuiteEdit.Outcome
            switch edit {
            case .load(let values):
                outcome = state.domains.apply(.load(state.pending.applied(to: values)), tellsChanges: tellsChanges)
            case .putBack(let writes):
                let unchangedSince = writes.filter { !state.pending.removesAll && state.pending.changes[$0.key] == nil }
                outcome = state.domains.apply(.putBack(unchangedSince), tellsChanges: tellsChanges)
            default:
                outcome = state.domains.apply(edit, tellsChanges: tellsChanges)
            }
            guard keepsPending, outcome.isPersistable else { return outcome }
            switch edit {
            case .set(let key, let value):
                state.pending.record(value, forKey: key)
            case .setValues(let values):
                for (key, value) in values where !outcome.managed.contains(key) {
                    state.pending.record(value, forKey: key)
                }
            case .removeAll:
                state.pending.recordRemoveAll()
            case .conditional(let writes, let origin):
                for write in writes where outcome.stored.contains(write.key) {
                    state.pending.record(write.value, forKey: write.key, isOwn: origin == .thisProcess)
                }
            case .migrated:
                // Only the moves made.
                for move in outcome.moves {
                    if move.from != move.to {
                        state.pending.record(nil, forKey: move.from)
                    }
                    state.pending.record(move.value, forKey: move.to)
                }
            case .load, .register, .administrator, .putBack:
                break
            }
            return outcome
        }
    }

    func report(_ problem: DefaultsError) {
        problems.report(problem)
    }

    // MARK: Persisting

    /// Runs before the backend persists pending changes, holding its locks, with the keys this
    /// process changed (`nil`: every key; values written elsewhere are not among them): the sync
    /// engine makes its journal durable there, so that another process never sees a synced value
    /// without its journal entry. It must not write this suite.
    package typealias PersistListener = @Sendable (_ ownKeys: Set<String>?) -> Void

    /// Adds a listener told before each write; returns what removes it.
    package func addPersistListener(_ listener: @escaping PersistListener) -> Int {
        persistListeners.withLock { state in
            state.next += 1
            state.listeners[state.next] = listener
            return state.next
        }
    }

    package func removePersistListener(_ id: Int) {
        persistListeners.withLock { _ = $0.listeners.removeValue(forKey: id) }
    }

    /// Tells the persist listeners that `pending` is about to be persisted; called by the backend.
    func willPersist(_ pending: PendingChanges) {
        let listeners = persistListeners.withLock { Array($0.listeners.values) }
        for listener in listeners {
            listener(pending.ownKeys)
        }
    }

    /// Takes the pending changes with the persistent values they are part of, for the backend to
    /// persist; `nil` when none is pending.
    func takePending() -> (pending: PendingChanges, persistent: [String: PropertyListValue])? {
        state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            defer { state.pending = PendingChanges() }
            return (state.pending, state.domains.persistent)
        }
    }

    /// Puts back pending changes whose persisting failed, in front of the ones made meanwhile.
    func restorePending(_ pending: PendingChanges) {
        state.withLock { $0.pending = pending.followed(by: $0.pending) }
    }
}

/// One process's changes to a suite that are not persisted yet: what it set and removed, after
/// removing everything if it did. Applied on top of the file as found when writing, so that
/// other processes' keys are kept.
struct PendingChanges {
    /// What happens to one key: not a ``Defaults/KeyChange`` (what a read sees), but the edit
    /// this process makes to the stored values.
    enum Edit {
        case set(PropertyListValue)
        case removed
    }

    var removesAll = false
    var changes: [String: Edit] = [:]
    /// The keys whose latest change was written elsewhere (``SuiteEdit/conditional(_:origin:)``):
    /// not this process's changes, for the persist listeners.
    var writtenElsewhere: Set<String> = []

    var isEmpty: Bool { !removesAll && changes.isEmpty }

    /// The keys this process changed, `nil` when it removed every value.
    var ownKeys: Set<String>? {
        removesAll ? nil : Set(changes.keys).subtracting(writtenElsewhere)
    }

    mutating func record(_ value: PropertyListValue?, forKey key: String, isOwn: Bool = true) {
        changes[key] = value.map(Edit.set) ?? .removed
        if !isOwn {
            writtenElsewhere.insert(key)
        } else if !writtenElsewhere.isEmpty {
            writtenElsewhere.remove(key)
        }
    }

    mutating func recordRemoveAll() {
        removesAll = true
        changes.removeAll()
        writtenElsewhere.removeAll()
    }

    /// `base` with these changes made.
    func applied(to base: [String: PropertyListValue]) -> [String: PropertyListValue] {
        var result = removesAll ? [:] : base
        for (key, change) in changes {
            switch change {
            case .set(let value): result[key] = value
            case .removed: result[key] = nil
            }
        }
        return result
    }

    /// These changes followed by `newer`: to put back changes whose write failed, in front of
    /// the ones made meanwhile.
    func followed(by newer: PendingChanges) -> PendingChanges {
        if newer.removesAll {
            return newer
        }
        var result = self
        result.changes.merge(newer.changes) { _, new in new }
        result.writtenElsewhere.subtract(newer.changes.keys)
        result.writtenElsewhere.formUnion(newer.writtenElsewhere)
        return result
    }
}
