import DefaultsPropertyList
import DefaultsStorage
import Foundation

/// A suite of synced keys, bound to the engine: its journal, the engine's observer of its changes
/// and persist listener, and the names it syncs. One per suite, however many of its keys sync;
/// unbound when its last key stops syncing.
struct SyncedSuite {
    let suite: any DefaultsSuite
    let journal: SyncJournal
    let token: SuiteChangeCenter.Token
    /// The engine's persist listener on the suite's store, for a suite of this library.
    var persistListener: Int?
    var names: Set<String>
    /// The former names of the synced keys (`migrating:`), each with the migration of the key
    /// that lists it: another version of the program syncs the key under that name, and its
    /// records are read into the key, converted.
    var formerNames: [String: any SyncedKeyMigration] = [:]
    /// Keys whose remote value is in the journal and not yet in the suite (between the two steps
    /// of applying records): a write of the suite meanwhile must not take the value it still
    /// holds for a local change.
    var applying: Set<String> = []
    /// Each pending change's value as encoded when it was recorded, with its digest: pushed as it
    /// is, so that a value is encoded once on its way out.
    var encoded: [String: (data: Data?, digest: String)] = [:]

    var id: ObjectIdentifier { ObjectIdentifier(suite) }

    /// The synced key a record named `name` is for, with the migration converting its value when
    /// `name` is a former name of the key; `nil` when no key of this suite reads it.
    func target(ofRecordNamed name: String) -> (name: String, migration: (any SyncedKeyMigration)?)? {
        if names.contains(name) { return (name, nil) }
        guard let migration = formerNames[name], names.contains(migration.name) else { return nil }
        return (migration.name, migration)
    }

    /// Adds the former names of a synced key; the first key to list a name keeps it. A former
    /// name is no longer synced as a key of its own (the journal may list it as pending, from the
    /// version before): the migration removes it here, and pushing that removal would take the
    /// value from the machines still on that version.
    mutating func addFormerNames(of migration: (any SyncedKeyMigration)?) {
        for name in migration?.formerNames ?? [] where formerNames[name] == nil {
            formerNames[name] = migration
            names.remove(name)
        }
    }

    /// Stops syncing `name`: its former names go with it.
    mutating func remove(_ name: String) {
        names.remove(name)
        formerNames = formerNames.filter { $0.value.name != name }
    }

    /// Whether the administrator enforces `name` here: its value is then neither pushed from
    /// here nor replaced by a remote one (which is stored beneath, for when it stops).
    func isManaged(_ name: String) -> Bool {
        suite.backend.isManaged(name)
    }

    /// The value `name` holds here, as sync sees it: its stored value, never a default or what the
    /// administrator enforces; `persistent` is the suite's stored values when already read.
    func held(_ name: String, in persistent: [String: PropertyListValue]? = nil) -> PropertyListValue? {
        (persistent ?? suite.persistentStoredValues())[name]
    }
}
