import DefaultsSchema

/// What a declaration says about a key besides its name, type and default: its description, the
/// values it allows and what it was before. Kept in ``Defaults/KeyRegistry``, not on the key
/// itself, so that a described key reads and writes as a bare one; the key keeps only a
/// `StoredValueCheck` of its allowed values, which a read that is not cached asks.
struct KeyMeaning: Sendable {
    var description: String?
    /// The allowed values in stored form, when they have one.
    var allowedValues: AllowedValues?
    /// How the allowed values read in a message, from the typed values (`8...72`).
    var allowedSummary: String?
    /// Whether the default value is among the allowed values (checked on the typed values).
    var isDefaultAllowed = true
    /// What the key was before (``Defaults/Migration``), run when it is declared; its former
    /// names are part of the schema.
    var migration: KeyMigration?

    /// The former names as the schema lists them: `nil` when there are none, so that the schema
    /// of a key that was never renamed is written as before.
    var schemaFormerNames: [String]? {
        guard let names = migration?.formerNames, !names.isEmpty else { return nil }
        return names
    }

    /// The former names only the program converts, as the schema lists them: `nil` when none.
    var schemaFormerNamesConvertedByProgram: [String]? {
        guard let names = migration?.formerNamesConvertedByProgram, !names.isEmpty else { return nil }
        return names
    }

    /// `schema` with what this meaning adds to a key's own description of itself.
    func completing(_ schema: KeySchema) -> KeySchema {
        var schema = schema
        schema.formerNamesConvertedByProgram = schemaFormerNamesConvertedByProgram
        return schema
    }
}
