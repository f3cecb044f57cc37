import DefaultsSchema

extension Defaults.Key where Value: Comparable {
    /// Creates a key with a static default value that allows only the values in `range`.
    ///
    /// The range is part of the key's schema (``Defaults/exportSchema(of:to:)``): the `defaults`
    /// command refuses to write a value outside it. A default outside it is a programming error,
    /// reported when the key is declared: logged as a warning and listed in
    /// ``Defaults/KeyRegistry/defaultValueProblems``. A stored value outside it (written by
    /// another program, an older version, a person) is read as it is, and logged as a warning
    /// once per suite and value, in the words the command refuses it with.
    ///
    /// ```swift
    /// static let fontSize = Key<Int>("fontSize", default: 12, description: "Text size, in points.", range: 8...72)
    /// ```
    public convenience init(
        _ name: String,
        default defaultValue: Value,
        suite: any DefaultsSuite = Defaults.standardSuite,
        iCloud: Bool = false,
        description: String? = nil,
        range: ClosedRange<Value>,
        migrating migration: Defaults.Migration<Value>? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        var meaning = KeyMeaning(description: description)
        meaning.allowedSummary = "\(range)"
        meaning.isDefaultAllowed = range.contains(defaultValue)
        // Stored forms compare as the values do only for values stored as themselves (a number, a
        // string, a date); a type stored as JSON text would compare as text, so its range stays
        // out of the schema and is checked only here.
        if Value.isNativelySupportedType, let lower = Value.storedForm(of: range.lowerBound),
            let upper = Value.storedForm(of: range.upperBound),
            let lowerBound = SchemaValue(storedObject: lower), let upperBound = SchemaValue(storedObject: upper)
        {
            meaning.allowedValues = .range(lowerBound: lowerBound, upperBound: upperBound)
        }
        self.init(
            name, defaultSource: .value(defaultValue), suite: suite, iCloud: iCloud, meaning: meaning,
            migration: migration, site: KeyDeclarationSite(file: file, line: line))
    }
}

extension Defaults.Key where Value: Equatable {
    /// Creates a key with a static default value that allows only the values in `choices`.
    ///
    /// The choices are part of the key's schema, in stored form (an enum's raw values), and the
    /// `defaults` command refuses to write any other value. A default that is not among them is
    /// reported when the key is declared, and a stored value that is not is read as it is and
    /// logged once, as for ``init(_:default:suite:iCloud:description:range:migrating:file:line:)``.
    ///
    /// ```swift
    /// static let theme = Key<Theme>("theme", default: .system, choices: [.light, .dark, .system])
    /// ```
    public convenience init(
        _ name: String,
        default defaultValue: Value,
        suite: any DefaultsSuite = Defaults.standardSuite,
        iCloud: Bool = false,
        description: String? = nil,
        choices: [Value],
        migrating migration: Defaults.Migration<Value>? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        var meaning = KeyMeaning(description: description)
        meaning.allowedSummary = "\(choices)"
        meaning.isDefaultAllowed = choices.contains(defaultValue)
        let stored = choices.compactMap { Value.storedForm(of: $0).flatMap(SchemaValue.init(storedObject:)) }
        if stored.count == choices.count {
            meaning.allowedValues = .choices(stored)
        }
        self.init(
            name, defaultSource: .value(defaultValue), suite: suite, iCloud: iCloud, meaning: meaning,
            migration: migration, site: KeyDeclarationSite(file: file, line: line))
    }
}
