import DefaultsPropertyList
import DefaultsSchema
import Synchronization

extension Defaults {
    /// Every key created in this process, to find keys that collide.
    ///
    /// Each ``Key`` reports itself when it is created (a `static let` key, when first used). Two keys
    /// with the same name in the same suite but different value types are a ``KeyConflict``: it is
    /// logged as a warning through ``Defaults/logger``, with a message that names both
    /// declarations, and listed in ``conflicts``. The program goes on, as with Defaults (code whose
    /// setting changed type between releases does this, and each key then reads a value of the
    /// other type as its default):
    ///
    /// ```text
    /// The key name "id" is used in suite "com.example.app" with different value types:
    /// Key<Swift.Int>("id") at App/Books.swift:4 and Key<Swift.String>("id") at App/Comics.swift:9. …
    /// ```
    ///
    /// `Int` and `Int?` count as the same type: they store the same thing. The same key declared
    /// twice with the same type (for example through ``Key/in(_:)-(DefaultsSuite)``) is not a
    /// conflict. Keys of suites that no longer exist are forgotten.
    ///
    /// ```swift
    /// for conflict in Defaults.KeyRegistry.conflicts {
    ///     print(conflict)
    /// }
    /// ```
    public enum KeyRegistry {
        private struct SuiteEntry {
            weak var suite: (any DefaultsSuite)?
            let suiteName: String
            /// Declarations by name, in the order they were made.
            var declarations: [String: [KeyDeclaration]] = [:]
        }

        private static let entries = Mutex<[ObjectIdentifier: SuiteEntry]>([:])
        private static let namesBreakingRules = Mutex<[KeyNameProblem]>([])
        private static let defaultsOutsideAllowedValues = Mutex<[KeyDefaultProblem]>([])

        /// Every key declaration of suites that still exist, sorted by suite and name.
        public static var declarations: [KeyDeclaration] {
            liveEntries().flatMap { $0.declarations.values.joined() }.sorted(by: isOrderedBefore)
        }

        /// The key declarations made for `suite`, sorted by name.
        public static func declarations(in suite: any DefaultsSuite) -> [KeyDeclaration] {
            entry(for: suite).map { $0.declarations.values.joined().sorted(by: isOrderedBefore) } ?? []
        }

        /// Every conflict among the keys of suites that still exist.
        public static var conflicts: [KeyConflict] {
            liveEntries().flatMap(conflicts(in:)).sorted { ($0.suiteName, $0.name) < ($1.suiteName, $1.name) }
        }

        /// The conflicts among the keys of `suite`.
        public static func conflicts(in suite: any DefaultsSuite) -> [KeyConflict] {
            entry(for: suite).map(conflicts(in:))?.sorted { $0.name < $1.name } ?? []
        }

        /// Every key name that breaks the key-name rules (see ``Defaults/isValidKeyName(_:)``),
        /// once per name, in the order the keys were created. Such keys work; each was logged as a
        /// warning when created.
        public static var nameProblems: [KeyNameProblem] {
            namesBreakingRules.withLock { $0 }
        }

        /// Every key declared with a default outside its own allowed values (`range:` or
        /// `choices:`), once per declaration, in the order the keys were created. Each was logged
        /// as a warning when created; a test of an app can expect this list to be empty.
        public static var defaultValueProblems: [KeyDefaultProblem] {
            defaultsOutsideAllowedValues.withLock { $0 }
        }

        /// Logs and lists a key name that breaks the rules, once per name.
        static func record(_ problem: KeyNameProblem, suiteName: String) {
            let isNew = namesBreakingRules.withLock { problems in
                guard !problems.contains(problem) else { return false }
                problems.append(problem)
                return true
            }
            guard isNew else { return }
            Defaults.logger.warning(
                "\(problem.description)", metadata: ["key": "\(problem.name)", "suite": "\(suiteName)"])
        }

        /// Records a new key; reports a conflict with an earlier one.
        ///
        /// The key's schema is made only when asked for (``KeyDeclaration/schema``), from the
        /// default's stored form and the key's meaning.
        static func register<Value>(_ key: Key<Value>, iCloud: Bool, meaning: KeyMeaning) {
            // Before the key is recorded: a suite that reads its administrator's files meanwhile
            // asks the registry, as it would without the rule in between.
            DeclaredKeyRule.install { value, name, suite in
                declarationRejecting(value, named: name, in: suite).map { "\($0) cannot read \(value.kindName)" }
            }
            let declaration = KeyDeclaration(
                name: key.name,
                suiteName: key.suite.name,
                valueType: Value.self,
                file: key.declarationSite.file.description,
                line: key.declarationSite.line,
                // Through a protocol, so that the closure holds no metatype of `Value`; weakly, so
                // that the registry keeps no key (nor its suite) alive.
                makeSchema: { [weak key = key as any SchemaDescribingKey] in
                    key?.schema(meaning: meaning, iCloud: iCloud)
                },
                reads: { [weak key = key as any SchemaDescribingKey] in key?.reads($0) },
                meaning: meaning, iCloud: iCloud
            )
            if !meaning.isDefaultAllowed {
                record(
                    KeyDefaultProblem(
                        declaration: declaration,
                        defaultValue: String(describing: key.defaultValue),
                        allowedValues: meaning.allowedSummary ?? "its allowed values"
                    )
                )
            }
            let suite = key.suite
            let id = ObjectIdentifier(suite)
            let newConflict = entries.withLock { entries -> KeyConflict? in
                // An identifier whose suite is gone may be reused by a new suite at the same address.
                if entries[id]?.suite == nil {
                    entries.removeValue(forKey: id)
                    entries = entries.filter { $0.value.suite != nil }
                    entries[id] = SuiteEntry(suite: suite, suiteName: suite.name)
                }
                var list = entries[id]?.declarations[key.name] ?? []
                guard !list.contains(declaration) else { return nil }
                let isNewType = !list.contains { $0.storedType == declaration.storedType }
                list.append(declaration)
                entries[id]?.declarations[key.name] = list
                guard isNewType, list.count > 1 else { return nil }
                return Self.conflict(named: key.name, suiteName: suite.name, among: list)
            }
            if let conflict = newConflict {
                Defaults.logger.warning(
                    "\(conflict.description)",
                    metadata: ["key": "\(conflict.name)", "suite": "\(conflict.suiteName)"]
                )
            }
            suite.backend.keyWasDeclared(key.name)
        }

        /// The first live declaration of `name` in `suite` that cannot read `value` while no other
        /// one can, or `nil` when a declared key reads it (or none is declared): a stored value
        /// that fits no key of its name is the one rule by which the library ignores a value from
        /// outside the program (an administrator's file, another machine).
        static func declarationRejecting(
            _ value: PropertyListValue, named name: String, in suite: any DefaultsSuite
        ) -> KeyDeclaration? {
            guard let list = entry(for: suite)?.declarations[name] else { return nil }
            var rejecting: KeyDeclaration?
            for declaration in list {
                switch declaration.reads(value) {
                case true?: return nil
                case false?: rejecting = rejecting ?? declaration
                case nil: continue
                }
            }
            return rejecting
        }

        /// The migration a declaration of `key` gave (``Defaults/Migration``), if any.
        static func migration(of key: Keys) -> KeyMigration? {
            entry(for: key.suite)?.declarations[key.name]?.lazy.compactMap(\.meaning.migration).first
        }

        /// Logs and lists a default outside its key's allowed values, once per declaration.
        private static func record(_ problem: KeyDefaultProblem) {
            let isNew = defaultsOutsideAllowedValues.withLock { problems in
                guard !problems.contains(problem) else { return false }
                problems.append(problem)
                return true
            }
            guard isNew else { return }
            Defaults.logger.warning(
                "\(problem.description)",
                metadata: ["key": "\(problem.declaration.name)", "suite": "\(problem.declaration.suiteName)"]
            )
        }

        private static func liveEntries() -> [SuiteEntry] {
            entries.withLock { entries in
                entries = entries.filter { $0.value.suite != nil }
                return Array(entries.values)
            }
        }

        private static func entry(for suite: any DefaultsSuite) -> SuiteEntry? {
            entries.withLock { entries in
                guard let entry = entries[ObjectIdentifier(suite)], entry.suite === suite else { return nil }
                return entry
            }
        }

        private static func conflicts(in entry: SuiteEntry) -> [KeyConflict] {
            entry.declarations.compactMap { name, list in
                conflict(named: name, suiteName: entry.suiteName, among: list)
            }
        }

        /// The conflict among declarations of one name, if they have more than one value type:
        /// the first declaration of each type.
        private static func conflict(named name: String, suiteName: String, among list: [KeyDeclaration])
            -> KeyConflict?
        {
            var seen = Set<ObjectIdentifier>()
            let firstOfEachType = list.filter { seen.insert($0.storedType).inserted }
            guard firstOfEachType.count > 1 else { return nil }
            return KeyConflict(name: name, suiteName: suiteName, declarations: firstOfEachType)
        }

        private static func isOrderedBefore(_ lhs: KeyDeclaration, _ rhs: KeyDeclaration) -> Bool {
            (lhs.suiteName, lhs.name, lhs.file, lhs.line) < (rhs.suiteName, rhs.name, rhs.file, rhs.line)
        }
    }
}
