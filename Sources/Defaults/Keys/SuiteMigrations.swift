import DefaultsPropertyList

/// Runs keys' migrations (``Defaults/Migration``) on a suite: all that have something to do, as
/// one edit (``SuiteEdit/migrated(_:)``) through the store's one `apply`.
///
/// A suite of this library plans them again and applies them through
/// ``StoreBackedSuite/editExclusively(_:)``: a ``FileSuite`` inside
/// ``FileSuite/synchronize(editing:)``, the path of `modify`, holding `io` and the cross-process
/// file lock, on the file as other processes left it, and writes the file once, atomically. Two
/// processes that start together on an old file thus migrate once: the second finds the values
/// moved. What a migration does is decided on the values as read then, so running again changes
/// nothing.
///
/// Nothing is done, and no lock beyond the store's is taken, unless a migration's former name
/// (or, for a change of type, its own name) holds a value: a suite with nothing to migrate costs
/// a lookup per name.
enum SuiteMigrations {
    static func run(_ migrations: [KeyMigration], in suite: any DefaultsSuite) {
        guard !migrations.isEmpty else { return }
        guard let storeBacked = suite.backend.storeBacked else {
            runUnlocked(migrations, in: suite)
            return
        }
        // First, holding only the store's lock: presence tests, then the values looked at.
        let candidates = relevantValues(of: migrations, in: storeBacked.store)
        guard !candidates.migrations.isEmpty else { return }
        let firstPlan = plan(candidates.migrations, values: candidates.values)
        guard !firstPlan.moves.isEmpty else {
            report(firstPlan.unconvertible, in: suite)
            return
        }
        var planned: Plan?
        // Planned again on the values as they are now, no other writer between: another process
        // may have migrated the file meanwhile.
        storeBacked.editExclusively { store in
            let fresh = relevantValues(of: candidates.migrations, in: store)
            let plan = plan(fresh.migrations, values: fresh.values)
            planned = plan
            return plan.moves.isEmpty ? nil : .migrated(plan.moves)
        }
        // `nil`: the suite's lock could not be taken (reported by the suite); the next start
        // migrates.
        if let planned {
            report(planned.unconvertible, in: suite)
        }
    }

    /// What a set of migrations does: the moves, in order, and the values left unconverted.
    struct Plan {
        /// A value under `name` that `migration` cannot convert.
        typealias Unconvertible = (migration: KeyMigration, name: String, value: PropertyListValue)

        var moves: [KeyMove] = []
        var unconvertible: [Unconvertible] = []
    }

    /// Decides every migration in turn, each on the values as the earlier ones left them, so that
    /// keys of one chain declared together (`b` from `a`, `c` from `b` and `a`) end where the last
    /// one says.
    static func plan(_ migrations: [KeyMigration], values: [String: PropertyListValue]) -> Plan {
        var values = values
        var plan = Plan()
        for migration in migrations {
            switch migration.action(values: { values[$0] }) {
            case .move(let move)?:
                plan.moves.append(move)
                values[move.from] = nil
                values[move.to] = move.value
            case .unconvertible(let name, let value)?:
                plan.unconvertible.append((migration, name, value))
            case nil:
                continue
            }
        }
        return plan
    }

    /// The migrations that may apply to the store's persistent values, and the values of the
    /// names they look at, copied holding the store's lock (no conversion runs under it).
    private static func relevantValues(of migrations: [KeyMigration], in store: SuiteStore)
        -> (migrations: [KeyMigration], values: [String: PropertyListValue])
    {
        store.read { state in
            let persistent = state.domains.persistent
            let applying = migrations.filter { $0.mayApply(to: persistent) }
            var values: [String: PropertyListValue] = [:]
            for migration in applying {
                for name in migration.names {
                    values[name] = persistent[name]
                }
            }
            return (applying, values)
        }
    }

    /// A suite of another kind (`UserDefaults`, an application's own): planned on its persistent
    /// values, written as one `setValues`; as atomic as that suite's own writes.
    private static func runUnlocked(_ migrations: [KeyMigration], in suite: any DefaultsSuite) {
        let persistent = suite.persistentValues()
        let applying = migrations.filter { migration in migration.names.contains { persistent[$0] != nil } }
        guard !applying.isEmpty else { return }
        var values: [String: PropertyListValue] = [:]
        for name in applying.flatMap(\.names) {
            values[name] = PropertyListValue.from(persistent[name])
        }
        let plan = plan(applying, values: values)
        var changes: [(key: String, object: Any?)] = []
        for move in plan.moves {
            if move.from != move.to {
                changes.append((move.from, nil))
            }
            changes.append((move.to, move.value.object))
        }
        if !changes.isEmpty {
            suite.setValues(changes)
        }
        report(plan.unconvertible, in: suite)
    }

    private static func report(_ unconvertible: [Plan.Unconvertible], in suite: any DefaultsSuite) {
        guard !unconvertible.isEmpty else { return }
        let backend = suite.backend
        for (migration, name, value) in unconvertible {
            let place = name == migration.name ? "" : " (a former name of key \"\(migration.name)\")"
            backend.report(
                DefaultsError(
                    suite: suite.name, kind: .wrongType, key: name, fileURL: backend.problemFileURL,
                    message: "the value stored under \"\(name)\"\(place), \(value.kindName), cannot be converted to "
                        + "\(migration.valueTypeName); it is kept under \"\(name)\", not migrated"))
        }
    }
}
