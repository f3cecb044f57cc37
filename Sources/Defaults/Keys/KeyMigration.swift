import DefaultsPropertyList

/// A key's ``Defaults/Migration`` with its value type erased: what the registry keeps (in
/// ``KeyMeaning``) and ``SuiteMigrations`` runs. It decides, from stored values alone, what one
/// key's migration does: nothing, a move, or a value it cannot convert.
struct KeyMigration: Sendable {
    struct Step: Sendable {
        /// `nil`: the key's own name.
        let formerName: String?
        let conversion: any StoredFormConversion

        /// The stored form the key stores for a value stored under the former name; `nil` when
        /// it cannot be converted.
        func convert(_ stored: PropertyListValue) -> PropertyListValue? {
            conversion.storedForm(converting: stored)
        }
    }

    /// The key's name.
    let name: String
    /// The key's value type, for messages.
    let valueTypeName: String
    /// Newest first.
    let steps: [Step]
    /// Reads stored values as the key's type, to tell whether one is in the form it stores now.
    private let currentForm: any StoredFormConversion
    /// The names the key was stored under, newest first, for its schema.
    let formerNames: [String]
    /// Those of ``formerNames`` whose values only the program's own closure converts, for its
    /// schema (``KeySchema/formerNamesConvertedByProgram``).
    let formerNamesConvertedByProgram: [String]
    private let changesTypeInPlace: Bool

    init<Value: Defaults.Serializable>(name: String, migration: Defaults.Migration<Value>) {
        self.name = name
        valueTypeName = String(reflecting: Value.self)
        steps = migration.steps.map { step in
            Step(
                formerName: step.formerName == name ? nil : step.formerName,
                conversion: TypedStoredFormConversion(conversion: step.conversion))
        }
        currentForm = TypedStoredFormConversion(conversion: AsStored<Value>())
        var seen = Set<String>()
        formerNames = steps.compactMap(\.formerName).filter { seen.insert($0).inserted }
        let byProgram = Set(
            zip(steps, migration.steps).filter { $0.1.conversion.isTheProgramsOwn }.compactMap { $0.0.formerName })
        formerNamesConvertedByProgram = formerNames.filter(byProgram.contains)
        changesTypeInPlace = steps.contains { $0.formerName == nil }
    }

    /// Every name whose stored value the migration looks at.
    var names: [String] { [name] + formerNames }

    /// Whether `persistent` may hold something to migrate: presence alone, no decoding, so that
    /// it is cheap to ask holding the suite's lock. A key whose former names hold nothing costs
    /// a lookup per name.
    func mayApply(to persistent: [String: PropertyListValue]) -> Bool {
        if persistent[name] != nil {
            return changesTypeInPlace
        }
        return formerNames.contains { persistent[$0] != nil }
    }

    /// Whether a value stored under the key's name is in the form the key stores now.
    func isCurrent(_ stored: PropertyListValue) -> Bool {
        currentForm.storedForm(converting: stored) == stored
    }

    /// The stored form the key stores for `value`, stored under `formerName` (a record of that
    /// name synced from a machine with an earlier version); `nil` when the key never had that
    /// name or the value cannot be converted.
    func converted(_ value: PropertyListValue, from formerName: String) -> PropertyListValue? {
        converted(value, by: steps.filter { $0.formerName == formerName })
    }

    /// `value` converted by the first of `steps` (newest first) that converts it.
    private func converted(_ value: PropertyListValue, by steps: [Step]) -> PropertyListValue? {
        for step in steps {
            if let converted = step.convert(value) { return converted }
        }
        return nil
    }

    /// What the migration does to `values`, the persistent values it looks at.
    enum Action {
        case move(KeyMove)
        /// The value under `name` cannot be converted; it stays.
        case unconvertible(name: String, value: PropertyListValue)
    }

    /// What the migration does given the persistent values (`nil` when it does nothing): the
    /// key's own value is kept when the key reads it; otherwise the newest former name that holds
    /// a value moves to the key's name, converted.
    func action(values: (String) -> PropertyListValue?) -> Action? {
        if let own = values(name) {
            let inPlace = steps.filter { $0.formerName == nil }
            guard !inPlace.isEmpty, !isCurrent(own) else { return nil }
            guard let converted = converted(own, by: inPlace) else { return .unconvertible(name: name, value: own) }
            return converted == own ? nil : .move(KeyMove(from: name, to: name, expected: own, value: converted))
        }
        // The newest former name holding a value; every step of that name is tried, newest first.
        guard let formerName = formerNames.first(where: { values($0) != nil }), let old = values(formerName) else {
            return nil
        }
        guard let converted = converted(old, from: formerName) else {
            return .unconvertible(name: formerName, value: old)
        }
        return .move(KeyMove(from: formerName, to: name, expected: old, value: converted))
    }
}

/// A conversion from a stored value to the stored form of a key's value, whatever its type.
protocol StoredFormConversion: Sendable {
    func storedForm(converting stored: PropertyListValue) -> PropertyListValue?
}

/// A ``MigrationConversion`` to the stored form its value type stores.
private struct TypedStoredFormConversion<Value: Defaults.Serializable>: StoredFormConversion {
    let conversion: any MigrationConversion<Value>

    func storedForm(converting stored: PropertyListValue) -> PropertyListValue? {
        conversion.value(from: stored.object).flatMap { Value.storedForm(of: $0) }.flatMap(PropertyListValue.from)
    }
}

/// The value a stored object reads as, with no conversion.
private struct AsStored<Value: Defaults.Serializable>: MigrationConversion {
    func value(from object: Any) -> Value? {
        Value.value(fromStoredForm: object)
    }
}
