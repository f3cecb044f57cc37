extension Defaults {
    /// Keys for one purpose, whose stored names share a namespace, as SafeDefaultsKit's
    /// `uniqueValue` gives them.
    ///
    /// Two groups can each have an `id` key without overwriting each other's value:
    ///
    /// ```swift
    /// enum BookSettings: Defaults.KeyGroup {
    ///     static let namespace = "book"
    ///     static let id = key("id", default: 0)                   // stored as "book:id"
    ///     static let title: Defaults.Key<String?> = key("title")  // stored as "book:title"
    /// }
    ///
    /// enum ComicSettings: Defaults.KeyGroup {
    ///     static let namespace = "comic"
    ///     static let id = key("id", default: 0)                   // stored as "comic:id"
    /// }
    ///
    /// Defaults[BookSettings.id] = 5
    /// Defaults[ComicSettings.id] = 10
    /// ```
    ///
    /// The keys are ordinary ``Key`` values: use them with `Defaults[…]`, observation, `@Default`
    /// and snapshots, or give them short names in `Defaults.Keys`
    /// (`static let bookID = BookSettings.id`).
    ///
    /// A stored name is `namespace`, ``namespaceSeparator`` (`:`) and the key's name. It must follow
    /// the key-name rules (ASCII, no leading `@`, no `.`), so a namespace such as
    /// `com.example.books` is refused with a message; use `books` or `com_example_books`.
    public protocol KeyGroup {
        /// The prefix of every stored name in the group. Write it out (rather than deriving it from
        /// the type's name) so that renaming the type keeps the stored values.
        static var namespace: String { get }

        /// What separates the namespace from a key's name; `:` unless given.
        static var namespaceSeparator: String { get }

        /// The suite the group's keys live in unless a key names its own; the standard suite unless
        /// given.
        static var suite: any DefaultsSuite { get }
    }
}

extension Defaults.KeyGroup {
    /// `:`: a character key names seldom use and the key-name rules allow.
    public static var namespaceSeparator: String { ":" }

    /// The standard suite.
    public static var suite: any DefaultsSuite { Defaults.standardSuite }

    /// The name `name` is stored under: `"<namespace>:<name>"`.
    public static func storedName(for name: String) -> String {
        namespace + namespaceSeparator + name
    }

    /// A key of this group with a static default value, stored as ``storedName(for:)``.
    ///
    /// - Parameters:
    ///   - name: The key's name within the group.
    ///   - defaultValue: The value a read returns while none is stored.
    ///   - suite: The key's suite; the group's ``suite`` unless given.
    ///   - file: Where the key is declared, for ``Defaults/KeyRegistry``'s reports; leave the default.
    ///   - line: Where the key is declared, for ``Defaults/KeyRegistry``'s reports; leave the default.
    public static func key<Value: Defaults.Serializable>(
        _ name: String,
        default defaultValue: Value,
        suite: (any DefaultsSuite)? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Defaults.Key<Value> {
        Defaults.Key(storedName(for: name), default: defaultValue, suite: suite ?? self.suite, file: file, line: line)
    }

    /// An optional key of this group whose default value is `nil`, stored as ``storedName(for:)``.
    ///
    /// ```swift
    /// static let title: Defaults.Key<String?> = key("title")
    /// ```
    public static func key<Wrapped: Defaults.Serializable>(
        _ name: String,
        suite: (any DefaultsSuite)? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Defaults.Key<Wrapped?> {
        Defaults.Key(storedName(for: name), default: nil, suite: suite ?? self.suite, file: file, line: line)
    }

    /// A key of this group whose default value is computed on each read of a missing value. As
    /// for ``Defaults/Key``, the closure need not be `Sendable`: it runs on the thread that reads.
    public static func key<Value: Defaults.Serializable>(
        _ name: String,
        suite: (any DefaultsSuite)? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        default defaultValueGetter: @escaping () -> Value
    ) -> Defaults.Key<Value> {
        Defaults.Key(
            storedName(for: name), suite: suite ?? self.suite, file: file, line: line, default: defaultValueGetter)
    }

    /// The names of the values stored in the group's ``suite`` under its namespace.
    public static var storedNames: [String] {
        let prefix = storedName(for: "")
        return suite.persistentValues().keys.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// Removes every value stored in the group's ``suite`` under its namespace, as one change, so
    /// that the group's keys read their default values again. Other keys are untouched.
    public static func removeAll() {
        suite.setValues(storedNames.map { (key: $0, object: nil) })
    }
}
