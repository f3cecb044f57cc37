import DefaultsPropertyList
import DefaultsStorage

/// A key as sync sees it: a name in a suite, and how the key reads the records of its former
/// names. Sync knows no key type: the typed API above hands it these (`Defaults.iCloud`).
package struct SyncedKey: Hashable, Sendable {
    /// The name the value is stored and synced under.
    package let name: String
    /// The suite that holds the value.
    package let suite: any DefaultsSuite
    /// The typed API's own key, handed back as it was given (`Defaults.iCloud.keys`).
    package let declaration: (any AnyObject & Sendable)?
    private let lookUpMigration: @Sendable () -> (any SyncedKeyMigration)?

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - declaration: The typed API's key this stands for.
    ///   - migration: The key's migration as declared now, asked each time the engine looks:
    ///     a declaration of the same key with `migrating:` may come after it was added.
    package init(
        name: String, suite: any DefaultsSuite, declaration: (any AnyObject & Sendable)? = nil,
        migration: @escaping @Sendable () -> (any SyncedKeyMigration)? = { nil }
    ) {
        self.name = name
        self.suite = suite
        self.declaration = declaration
        lookUpMigration = migration
    }

    /// How records of the key's former names are read into it; `nil` when it has none.
    package var migration: (any SyncedKeyMigration)? { lookUpMigration() }

    /// Keys are one key when their names and suites are: the migration comes with the name.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.suite === rhs.suite
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(ObjectIdentifier(suite))
    }
}

/// A synced key's former names (`migrating:` in its declaration), and how a value stored under
/// one of them reads as the key's: another version of the program syncs the key under that name.
package protocol SyncedKeyMigration: Sendable {
    /// The key's name.
    var name: String { get }
    /// The names the key was stored under, newest first.
    var formerNames: [String] { get }
    /// The key's value type, for messages.
    var valueTypeName: String { get }
    /// The stored form the key stores for `value`, stored under `formerName`; `nil` when the key
    /// never had that name or the value cannot be converted.
    func converted(_ value: PropertyListValue, from formerName: String) -> PropertyListValue?
}
