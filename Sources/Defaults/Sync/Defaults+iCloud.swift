import DefaultsSync
import Foundation

extension Defaults {
    /// Syncs the values of chosen keys between machines, as Defaults syncs them through iCloud.
    ///
    /// Mark a key with `iCloud: true`, or add it at run time, and connect a sync store once at
    /// launch; every change of the key then reaches the other machines using the same store, and
    /// theirs reach this one (observers see them like any other change):
    ///
    /// ```swift
    /// import Defaults
    /// import DefaultsPostgres
    ///
    /// extension Defaults.Keys {
    ///     static let isUnicornMode = Key<Bool>("isUnicornMode", default: false, iCloud: true)
    /// }
    ///
    /// Defaults.iCloud.use(try PostgresSyncStore(url: "postgres://user@host:5432/db", namespace: "com.example.app"))
    /// Defaults[.isUnicornMode] = true  // synced to the other machines
    /// ```
    ///
    /// - If there is a conflict, the latest change wins, by a hybrid logical clock: a machine whose
    ///   clock runs behind cannot overwrite a newer value.
    /// - Reads and writes never wait for the network. Changes made offline are kept in a journal
    ///   beside the suite's file and pushed when the store is reachable again, also after a restart.
    /// - A value over 1 MB (iCloud's limit) is kept locally, not synced, and reported.
    /// - Without a store, `iCloud` keys are ordinary local keys; the log says so once.
    /// - Keys are matched by name, so a key syncs with the keys of the same name on other machines.
    public enum iCloud {
        /// The synced keys.
        public static var keys: Set<Defaults.Keys> {
            Set(SyncEngine.shared.keys.compactMap { $0.declaration as? Defaults.Keys })
        }

        /// Logs each synced change (key and version), each push and each connection, at `info`.
        public static var isDebug: Bool {
            get { SyncEngine.shared.isDebug.load(ordering: .relaxed) }
            set { SyncEngine.shared.isDebug.store(newValue, ordering: .relaxed) }
        }

        /// Where syncing stands: connected or not, pending changes, last sync, last problem.
        public static var status: SyncStatus { SyncEngine.shared.status }

        /// Adds keys to be synced.
        public static func add<each Value: Defaults.Serializable>(_ keys: repeat Defaults.Key<each Value>) {
            repeat SyncEngine.shared.add(each keys)
        }

        /// Stops syncing keys; their local values stay.
        public static func remove<each Value: Defaults.Serializable>(_ keys: repeat Defaults.Key<each Value>) {
            repeat SyncEngine.shared.remove([each keys])
        }

        /// Stops syncing keys; their local values stay.
        public static func remove(_ keys: [Defaults.Keys]) {
            SyncEngine.shared.remove(keys)
        }

        /// Stops syncing every key.
        public static func removeAll() {
            SyncEngine.shared.removeAll()
        }

        /// Waits until every local change is on the store and the store's newer values are applied.
        ///
        /// You generally don't need this, as syncing is automatic. While the store is unreachable it
        /// waits for it to come back; cancel the calling task to stop waiting, or give a timeout
        /// (``waitForSyncCompletion(timeout:)``). Without a store it returns at once. Changes the
        /// store refused are not waited for: the status returned lists them.
        ///
        /// ```swift
        /// Defaults[.isUnicornMode] = true
        /// await Defaults.iCloud.waitForSyncCompletion()
        /// // The value is now on the store too.
        /// ```
        ///
        /// - Returns: The status once done: what could not be synced is in its
        ///   ``SyncStatus/refusedKeys`` and ``SyncStatus/lastError``.
        @discardableResult
        public static func waitForSyncCompletion() async -> SyncStatus {
            await SyncEngine.shared.waitForSyncCompletion()
            return status
        }

        /// Waits as ``waitForSyncCompletion()`` does, for at most `timeout`.
        ///
        /// ```swift
        /// let status = await Defaults.iCloud.waitForSyncCompletion(timeout: .seconds(5))
        /// if status.pendingChanges > 0 {
        ///     print("not synced yet:", status.lastError ?? "still connecting")
        /// }
        /// ```
        ///
        /// - Returns: The status when syncing completed or the time ran out: changes still pending
        ///   in ``SyncStatus/pendingChanges``, refused ones in ``SyncStatus/refusedKeys``.
        @discardableResult
        public static func waitForSyncCompletion(timeout: Duration) async -> SyncStatus {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await SyncEngine.shared.waitForSyncCompletion() }
                group.addTask { try? await Task.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
            }
            return status
        }

        /// Connects the store that synced keys sync through, replacing any previous one.
        ///
        /// Call it once at launch. It returns at once: the store connects in the background, and
        /// failures are reported in the log and in ``status``, while keys go on working locally.
        public static func use(_ store: any DefaultsSyncStore) {
            use(store, clock: HybridLogicalClock())
        }

        /// Connects a store, with the clock that versions this process's changes (tests inject
        /// one whose wall clock runs behind or ahead).
        package static func use(_ store: any DefaultsSyncStore, clock: HybridLogicalClock) {
            SyncEngine.shared.use(store, clock: clock)
        }
    }
}
