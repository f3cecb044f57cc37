/// One key of a domain's schema: what a program declared with `Defaults.Key`.
public struct KeySchema: Sendable, Hashable, Codable {
    /// The name the value is stored under.
    public var name: String
    /// The property-list type of the stored value; `nil` when the program could not tell it (an
    /// optional key of a type that is stored in several forms), and then nothing is checked.
    public var type: StoredType?
    /// The Swift type of the key's value, as `String(reflecting:)` names it (`Swift.Int`,
    /// `MyApp.Theme`).
    public var swiftType: String
    /// The default value as stored; `nil` when there is none to store (an optional key whose
    /// default is `nil`, a default computed on each read).
    public var defaultValue: SchemaValue?
    /// Whether the default is computed on each read, so that no value stands for it.
    public var isDefaultDynamic: Bool
    /// What the setting means, for people.
    public var description: String?
    /// The values the key allows besides its type, if it limits them.
    public var allowedValues: AllowedValues?
    /// Whether the value syncs between machines (`iCloud: true`).
    public var iCloud: Bool
    /// The names the key was stored under in earlier versions, newest first (its declaration's
    /// `migrating:`), whose values the program moves to ``name``; `nil` when it was never
    /// renamed. Absent from schemas written before it existed, which decode as before.
    public var formerNames: [String]?
    /// Those of ``formerNames`` whose values the program converts with a closure of its own
    /// (`.converted(from:as:_:)`), which no other reader of the schema has: the `defaults`
    /// command leaves their values for the program to move. `nil` when there are none; absent
    /// from schemas written before it existed, whose former names were all taken as renames.
    public var formerNamesConvertedByProgram: [String]?

    /// Creates a key's schema.
    public init(
        name: String,
        type: StoredType?,
        swiftType: String,
        defaultValue: SchemaValue?,
        isDefaultDynamic: Bool = false,
        description: String? = nil,
        allowedValues: AllowedValues? = nil,
        iCloud: Bool = false,
        formerNames: [String]? = nil
    ) {
        self.name = name
        self.type = type
        self.swiftType = swiftType
        self.defaultValue = defaultValue
        self.isDefaultDynamic = isDefaultDynamic
        self.description = description
        self.allowedValues = allowedValues
        self.iCloud = iCloud
        self.formerNames = formerNames
    }

    /// Why `value` does not fit this key, in words naming both; `nil` when it fits.
    ///
    /// A value fits when it has the key's stored type (an integer fits a float key, as a
    /// property list reads it, and is judged as the float the key reads) and is among the allowed
    /// values; allowed values that contradict the key's type or themselves
    /// (``allowedValuesProblems``) are not held against it.
    public func problem(with value: SchemaValue) -> String? {
        if let mismatch = typeMismatch(with: value) {
            return mismatch
        }
        let value = value.read(as: type)
        if let allowedValues = consistentAllowedValues, !allowedValues.allows(value) {
            return "\(name) (\(swiftType)) allows \(allowedValues.summary), and \(value) is not among them"
        }
        return nil
    }

    /// Whether a stored value of type `found` is read by a key stored as `expected`.
    public static func fits(_ found: StoredType, _ expected: StoredType) -> Bool {
        found == expected || (found == .integer && expected == .real)
    }
}
