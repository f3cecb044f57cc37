import Foundation

/// What the engine knows of its connection with the store in use; a new store starts a new one.
struct SyncSession {
    /// A record the store refused, set aside until its key's value changes.
    struct Refusal {
        var timestamp: SyncTimestamp
        var reason: String
    }

    var store: (any DefaultsSyncStore)?
    /// Tells the events of this session's store from those of an earlier one still arriving.
    var generation = 0
    var runTask: Task<Void, Never>?
    /// The store's events queued on the engine's task and not yet run (the one running included),
    /// and those admitted on their way there: at most ``SyncEngine/queuedEventLimit`` but for
    /// those of a cancelled reporting task.
    var queuedEvents = 0
    /// The store's reports waiting for room, first come first; resumed with `true` when admitted
    /// (their event counted in `queuedEvents`), `false` when not (the session was replaced, or
    /// the reporting task cancelled).
    var reporters: [(id: UUID, continuation: CheckedContinuation<Bool, Never>)] = []
    var isConnected = false
    var hasCaughtUp = false
    /// A whole catch-up with this store completed: from then on a reconnection takes only what
    /// changed meanwhile (``DefaultsSyncStore/changesSinceLastConnection()``).
    var hasCaughtUpInFull = false
    /// What keeps keys from syncing, the status's `lastError`.
    var problems = SyncProblems()
    /// Keys added since the last whole catch-up, for the next catch-up of added keys; one is
    /// queued while `isCatchUpAddedQueued`. Keys are often declared one by one after connecting
    /// (lazy `static let`s): each must not cost a catch-up of its own.
    var addedSinceCatchUp: Set<String> = []
    /// Records the store refused, by key name.
    var refused: [String: Refusal] = [:]
    /// Remote values a local key cannot read (another version's type), by key name, with the
    /// record's time: not applied, and not answered with the local value.
    var keptAside: [String: SyncTimestamp] = [:]
}
