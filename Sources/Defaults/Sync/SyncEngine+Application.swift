import DefaultsStorage
import DefaultsSync

extension SyncEngine {
    /// The application's engine, behind ``Defaults/iCloud``: it syncs every key declared with
    /// `iCloud: true` (those declared before it started, then each one as it is declared), and
    /// binds the suites of the default directory whose journals hold changes not pushed yet.
    static let shared: SyncEngine = {
        let engine = SyncEngine(
            // Worked out at each `use`, as the environment then says (XDG_CONFIG_HOME, HOME).
            programDirectory: { FileSuite.defaultDirectory },
            keyAddedWithoutStore: { SyncedKeyDeclarations.noteNothingSyncs() },
            schedule: { delay, work in
                Task.detached {
                    try? await Task.sleep(for: delay)
                    work()
                }
            })
        let declared = SyncedKeyDeclarations.take { [unowned engine] key in engine.add(key) }
        for key in declared {
            engine.add(key)
        }
        return engine
    }()

    /// Syncs `key`, with its former names.
    package func add(_ key: Defaults.Keys) {
        add(SyncedKey(key))
    }

    /// Stops syncing `keys`; their local values stay.
    package func remove(_ keys: [Defaults.Keys]) {
        remove(keys.map(SyncedKey.init))
    }
}

extension SyncedKey {
    /// `key` as sync knows it: its name, its suite and the former names its declarations give,
    /// looked up in the key registry each time.
    init(_ key: Defaults.Keys) {
        self.init(name: key.name, suite: key.suite, declaration: key) { Defaults.KeyRegistry.migration(of: key) }
    }
}

extension KeyMigration: SyncedKeyMigration {}
