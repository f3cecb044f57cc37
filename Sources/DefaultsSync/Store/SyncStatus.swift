import Foundation

/// Where syncing stands in this process; read it with ``Defaults/iCloud/status``.
public struct SyncStatus: Sendable, Hashable {
    /// The connected store's description, without credentials; `nil` when none is connected.
    public var store: String?
    /// Whether the store is connected now.
    public var isConnected: Bool
    /// Local changes not yet on the store that the next push takes. A change the store refused
    /// (``refusedKeys``) or of a key the administrator manages here is set aside, not counted:
    /// waiting for sync does not wait for it.
    public var pendingChanges: Int
    /// When the last catch-up or push completed.
    public var lastSync: Date?
    /// What keeps keys from syncing now, the latest raised of those that stand: a lost
    /// connection (until the store reconnects), a failed call to the store (until one succeeds),
    /// keys the store refused (until they are pushed), or a value that could not be encoded or
    /// read (until the next connection); `nil` when none stands.
    public var lastError: String?
    /// Keys the store refused (a name or value beyond what it can hold), sorted: set aside until
    /// their value changes, while every other key syncs.
    public var refusedKeys: [String]
    /// Keys whose value from another machine this program's key cannot read (another version
    /// stores another type there), or whose version is stamped more than a day ahead of this
    /// machine's clock, sorted: not applied, each reported once through the suite's problems
    /// (``DefaultsError/Kind/wrongType``), until a value it takes arrives.
    public var keptAsideKeys: [String]
    /// How long the oldest local change not yet on the store has waited (by the clock that
    /// stamped it); zero when every change is on the store, `nil` when no store is connected.
    /// A value stored before the key was first synced has no time, and is not counted.
    public var lag: Duration?

    /// Creates a status.
    public init(
        store: String? = nil,
        isConnected: Bool = false,
        pendingChanges: Int = 0,
        lastSync: Date? = nil,
        lastError: String? = nil,
        refusedKeys: [String] = [],
        keptAsideKeys: [String] = [],
        lag: Duration? = nil
    ) {
        self.store = store
        self.isConnected = isConnected
        self.pendingChanges = pendingChanges
        self.lastSync = lastSync
        self.lastError = lastError
        self.refusedKeys = refusedKeys
        self.keptAsideKeys = keptAsideKeys
        self.lag = lag
    }
}
