import DefaultsSchema

/// What a declaration says about a key besides its name, type and default: its description and
/// the values it allows. Kept in ``Defaults/KeyRegistry``, never on the key itself, so that a
/// described key reads and writes exactly as a bare one.
struct KeyMeaning: Sendable {
    var description: String?
    /// The allowed values in stored form, when they have one.
    var allowedValues: AllowedValues?
    /// How the allowed values read in a message, from the typed values (`8...72`).
    var allowedSummary: String?
    /// Whether the default value is among the allowed values (checked on the typed values).
    var isDefaultAllowed = true
}
