import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema

/// What `defaults migrate` does to a domain's values: each value stored under a former name of a
/// key of the domain's schema (`KeySchema.formerNames`) moves to the key's name when the key's
/// name holds none and the key reads the value as it is (of the key's stored type). A value that
/// needs converting stays under its former name, as does every value of a former name the program
/// converts with a closure of its own (`KeySchema.formerNamesConvertedByProgram`): only the program
/// knows its conversion, and moves it when it declares the key.
///
/// As the library (`Defaults.Migration`): the newest former name holding a value is the one
/// moved, and a value of the key's own wins. Stricter than it: a former name that is a key of
/// the schema too keeps its value, which is that key's.
struct FormerNameMoves: Equatable {
    /// A value stored under `formerName` and the key it belongs to, `key`.
    struct Move: Equatable {
        var formerName: String
        var key: String
    }

    /// A value that stays under its former name, and why.
    struct Kept: Equatable {
        var formerName: String
        var key: String
        var reason: String
    }

    /// The values that move, in the schema's order of keys.
    var moves: [Move] = []
    /// The values under former names that stay.
    var kept: [Kept] = []

    var isEmpty: Bool { moves.isEmpty && kept.isEmpty }

    /// What migrating `values` by `schema` does.
    init(schema: DomainSchema, values: [String: PropertyListValue]) {
        let keyNames = Set(schema.keys.map(\.name))
        // A former name two keys list goes to the first of them; the other keeps nothing of it.
        var claimed = Set<String>()
        for key in schema.keys {
            var moved = values[key.name] != nil
            for formerName in key.formerNames ?? [] where formerName != key.name && values[formerName] != nil {
                guard claimed.insert(formerName).inserted else { continue }
                if keyNames.contains(formerName) {
                    // The name is a key of this version too: its value is that key's.
                    keep(formerName, of: key.name, because: "\(formerName) is a key of its own")
                } else if values[key.name] != nil {
                    keep(formerName, of: key.name, because: "\(key.name) has a value")
                } else if moved {
                    keep(formerName, of: key.name, because: "a newer name's value moves to \(key.name)")
                } else if key.formerNamesConvertedByProgram?.contains(formerName) == true {
                    // Of the key's type or not, only the program's closure says what it becomes
                    // (and whether it is refused).
                    keep(formerName, of: key.name, because: "the program converts it")
                    moved = true
                } else if let type = key.type, let value = values[formerName],
                    !KeySchema.fits(SchemaValue(value).storedType, type)
                {
                    // Moved as it is, it would read as the default, and the program's conversion
                    // would never see it.
                    keep(
                        formerName, of: key.name, because: "\(key.name) is \(type.withArticle): the program converts it"
                    )
                    moved = true
                } else {
                    moves.append(Move(formerName: formerName, key: key.name))
                    moved = true
                }
            }
        }
    }

    private mutating func keep(_ formerName: String, of key: String, because reason: String) {
        kept.append(Kept(formerName: formerName, key: key, reason: reason))
    }

    /// Makes the moves in `edit`.
    func apply(to edit: inout DomainEdit) {
        for move in moves {
            edit.move(move.formerName, to: move.key)
        }
    }

    /// A line per move (`textSize -> fontSize`), then one per value kept, or `nothing to migrate`.
    var lines: [String] {
        guard !isEmpty else { return ["nothing to migrate"] }
        return moves.map { "\($0.formerName) -> \($0.key)" }
            + kept.map { "\($0.formerName) kept (\($0.reason)), not moved to \($0.key)" }
    }
}

extension DomainSchema {
    /// The key that lists `name` among its former names, when no key of the schema has that name.
    func key(formerlyNamed name: String) -> KeySchema? {
        guard key(named: name) == nil else { return nil }
        return keys.first { $0.formerNames?.contains(name) == true }
    }
}

extension CommandFailure {
    /// `failure` (a key not found), saying where the value went when the domain's schema lists
    /// `key` as a former name of a key; `failure` itself when it does not, or the schema cannot
    /// be read (the command reads without it).
    static func renamedKey(_ key: String, of domain: Domain, otherwise failure: CommandFailure) -> CommandFailure {
        guard let schema = try? SchemaCatalog.schema(of: domain), let renamed = schema.schema.key(formerlyNamed: key)
        else { return failure }
        var hinted = failure
        hinted.followingLines.append(
            "The key \(key) of \(domain.displayName) was renamed to \(renamed.name) (read that key)")
        return hinted
    }
}
