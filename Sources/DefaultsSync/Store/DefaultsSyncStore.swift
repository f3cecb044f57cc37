import Foundation

/// A remote that ``Defaults/iCloud`` syncs through: PostgreSQL with `DefaultsPostgres`, or your own.
///
/// The library keeps everything local (values, versions, changes not yet pushed) and decides
/// which version wins; a store only moves records. It keeps one record per key name, and replaces
/// it only with a record whose ``SyncRecord/timestamp`` is later.
///
/// Connect one with ``Defaults/iCloud/use(_:)``. Reads and writes of keys never wait for a store:
/// its methods are called from the library's own task, one at a time. Each must return or throw
/// within a bounded time, also when the connection is lost or the server stops answering: a call
/// that never ends stops syncing (and ``Defaults/iCloud/waitForSyncCompletion()`` with it).
public protocol DefaultsSyncStore: AnyObject, Sendable {
    /// A description for logs and status, without credentials (for example `postgres://db.local/app`).
    var description: String { get }

    /// Connects and stays connected until the calling task is cancelled, reconnecting with back-off
    /// when the connection is lost.
    ///
    /// Report ``SyncEvent/connected`` after each (re)connection, once the store receives other
    /// machines' changes, so that the library catches up on what it missed; report each record
    /// other machines change as ``SyncEvent/received(_:)``; report a failed or lost connection as
    /// ``SyncEvent/disconnected(_:)``.
    ///
    /// `report` returns once the library has room for the event: while it is behind (a few events
    /// queued and not yet applied), it waits, and a store that reads a connection should stop
    /// reading meanwhile rather than buffer without bound. It returns without waiting once the
    /// calling task is cancelled. A store whose answers to the other methods come on the
    /// connection that brings the events, behind them, must read on while any call awaits its
    /// answer: the library may be waiting for that call before it makes room.
    func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async

    /// The timestamp of every record the store holds, by key name: the first catch-up after
    /// ``Defaults/iCloud/use(_:)``, and after a reconnection when the store cannot say what changed
    /// meanwhile.
    func timestamps() async throws -> [String: SyncTimestamp]

    /// The records changed since the last one this store reported before the current connection,
    /// or `nil` when it cannot tell; the library then catches up with ``timestamps()``.
    ///
    /// Called right after ``SyncEvent/connected`` is reported for a reconnection, once the library
    /// has caught up in full at least once with this store. A store that numbers its changes in
    /// the order they commit (PostgreSQL's store does) answers with the changes after the last
    /// number it reported: a reconnection then costs what changed meanwhile, not a read of every
    /// record. The default answers `nil`.
    func changesSinceLastConnection() async throws -> [SyncRecord]?

    /// The records the store holds for `keys`; keys it has no record for are left out.
    func records(forKeys keys: [String]) async throws -> [SyncRecord]

    /// Stores each record unless the store holds a later one for its key; returns once they are
    /// durably stored. Throws when not connected. The records come sorted by key, so that two
    /// machines pushing overlapping keys lock them in the same order.
    ///
    /// A store that stored every record but some it will never accept (a key name or value beyond
    /// its limits) throws ``SyncRecordsRefused`` naming them, so that one bad key does not stop
    /// every other from syncing.
    func push(_ records: [SyncRecord]) async throws
}

extension DefaultsSyncStore {
    public func changesSinceLastConnection() async throws -> [SyncRecord]? { nil }
}

/// What a ``DefaultsSyncStore`` reports while it runs.
public enum SyncEvent: Sendable {
    /// Connected, and receiving other machines' changes.
    case connected
    /// Other machines changed these records.
    case received([SyncRecord])
    /// A connection attempt failed or the connection was lost; the store retries by itself.
    case disconnected(any Error)
}
