import Synchronization

extension Defaults {
    /// Runs the migrations of `keys` together: one edit, and for a ``FileSuite`` one write of its
    /// file, per suite, however many keys.
    ///
    /// A key declared with `migrating:` migrates on its own when it is declared (a `static let`,
    /// when first used): one edit per key. Keys declared while `keys` is evaluated wait, and
    /// migrate here with the others, so that a program with many renamed keys writes its file
    /// once:
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let width = Key<Int>("width", default: 800, migrating: .renamed(from: "windowWidth"))
    ///     static let height = Key<Int>("height", default: 600, migrating: .renamed(from: "windowHeight"))
    /// }
    ///
    /// Defaults.migrate([.width, .height])
    /// ```
    ///
    /// A key declared earlier migrated then; its migration runs again here, and changes nothing
    /// unless a former name holds a value again. Problems are reported through each key's suite
    /// (``FileSuite/problems``, ``FileSuite/onProblem``, ``Defaults/logger``).
    public static func migrate(_ keys: @autoclosure () -> [_AnyKey]) {
        let batch = MigrationBatch()
        let keys = MigrationBatch.$current.withValue(batch) { keys() }
        var bySuite: [ObjectIdentifier: (suite: any DefaultsSuite, migrations: [KeyMigration])] = [:]
        var order: [ObjectIdentifier] = []
        var seen = Set<Keys>()
        func add(_ migration: KeyMigration, of key: Keys) {
            guard seen.insert(key).inserted else { return }
            let id = ObjectIdentifier(key.suite)
            if bySuite[id] == nil {
                bySuite[id] = (key.suite, [])
                order.append(id)
            }
            bySuite[id]?.migrations.append(migration)
        }
        for (key, migration) in batch.deferred {
            add(migration, of: key)
        }
        for key in keys {
            if let migration = KeyRegistry.migration(of: key) {
                add(migration, of: key)
            }
        }
        for id in order {
            if let (suite, migrations) = bySuite[id] {
                SuiteMigrations.run(migrations, in: suite)
            }
        }
        for key in batch.syncedAfterMigrating {
            SyncedKeyDeclarations.declare(key)
        }
    }
}

/// The keys declared while ``Defaults/migrate(_:)`` evaluates its list, whose migrations wait to
/// run with the others, as one edit.
final class MigrationBatch: Sendable {
    @TaskLocal static var current: MigrationBatch?

    private let keys = Mutex<[(key: Defaults.Keys, migration: KeyMigration)]>([])
    private let synced = Mutex<[Defaults.Keys]>([])

    var deferred: [(key: Defaults.Keys, migration: KeyMigration)] { keys.withLock { $0 } }
    /// Synced keys whose migration waits: sync watches them once it has run.
    var syncedAfterMigrating: [Defaults.Keys] { synced.withLock { $0 } }

    /// Has sync watch a new synced key, after its migration (see `Key`'s initializer for why).
    static func declareSynced(_ key: Defaults.Keys, isMigrating: Bool) {
        if isMigrating, let batch = current {
            batch.synced.withLock { $0.append(key) }
        } else {
            SyncedKeyDeclarations.declare(key)
        }
    }

    /// Runs a new key's migration now, or with its batch when one is being declared.
    static func declared(_ key: Defaults.Keys, migration: KeyMigration) {
        if let batch = current {
            batch.keys.withLock { $0.append((key, migration)) }
        } else {
            SuiteMigrations.run([migration], in: key.suite)
        }
    }
}
