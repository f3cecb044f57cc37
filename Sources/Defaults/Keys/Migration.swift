import Foundation

extension Defaults {
    /// What a key was in an earlier version of the program (another name, another type, or
    /// both) and how a value stored then becomes the key's value now: given to a key's
    /// `migrating:` parameter, next to its declaration.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let fontSize = Key<Double>("fontSize", default: 12, migrating: .renamed(from: "textSize"))
    /// }
    /// ```
    ///
    /// When the key is declared (a `static let`, when first used), a value stored under a former
    /// name moves to the key's name, converted, in one edit of the suite: for a ``FileSuite``,
    /// under its cross-process lock, on the file as other processes left it, written once. It
    /// moves only while the key's own name holds no value: a value already stored there (the
    /// user set the new key) wins, and the old one stays where it is. A value that cannot be
    /// converted stays under its old name too, and is reported through the suite's problems as
    /// a ``DefaultsError`` of kind ``DefaultsError/Kind/wrongType``; nothing is ever dropped.
    ///
    /// Conversions that need no closure (those of ``renamed(from:_:)`` and
    /// ``changedType(from:)``): the value as the key reads it (an integer for a `Double` key, a
    /// string for an enum whose raw value is a `String`), a string holding the raw value of an
    /// enum stored another way, and a `Codable` value stored as a JSON string (Defaults' form) for
    /// a key that stores it as a native property list. Anything else takes a closure:
    /// ``converted(from:as:_:)``.
    ///
    /// Several migrations combine as a list, newest first: `[.renamed(from: "b"), .converted(from:
    /// "a", as: Int.self) { … }]`. The first former name that holds a value is the one migrated.
    public struct Migration<Value: Serializable>: ExpressibleByArrayLiteral {
        /// One former form of the key: the name the value was stored under (`nil` for the key's
        /// own name, a change of type only) and how it converts.
        struct Step: Sendable {
            let formerName: String?
            let conversion: any MigrationConversion<Value>
        }

        let steps: [Step]

        private init(steps: [Step]) {
            self.steps = steps
        }

        /// Migrations tried in order, newest first.
        public init(arrayLiteral migrations: Self...) {
            self.init(migrations)
        }

        /// Migrations tried in order, newest first.
        public init(_ migrations: [Self]) {
            steps = migrations.flatMap(\.steps)
        }

        /// The key was stored under `formerName`, and before that under each of `olderNames`
        /// (a chain of renames a → b → c: the key `c` says `.renamed(from: "b", "a")`). The
        /// value moves with the conversions that need no closure.
        public static func renamed(from formerName: String, _ olderNames: String...) -> Self {
            renamed(from: [formerName] + olderNames)
        }

        /// The key was stored under each of `formerNames`, newest first.
        public static func renamed(from formerNames: [String]) -> Self {
            Self(steps: formerNames.map { Step(formerName: $0, conversion: StandardConversion<Value>()) })
        }

        /// The key's own name stored a value of another type, `oldType`: a stored value the key
        /// does not read as it is now is converted in place with the conversions that need no
        /// closure. A value the key already reads stays as it is, brought to the form the key
        /// stores (an integer becomes a real for a `Double` key).
        public static func changedType<Old>(from oldType: Old.Type) -> Self {
            Self(steps: [Step(formerName: nil, conversion: StandardConversion<Value>())])
        }

        /// The key was stored under `formerName` (its own name when `nil`) as an `Old`, which
        /// `convert` turns into the key's value; `nil` from `convert` means it cannot, and the
        /// value stays where it is, reported.
        ///
        /// Under the key's own name, a stored value the key already reads is taken as current
        /// and `convert` is not called: a change of meaning under one name (seconds to minutes,
        /// both numbers) cannot be told from the stored value, and takes a new name.
        ///
        /// `convert` runs on the thread that declares the key (or calls ``Defaults/migrate(_:)``),
        /// holding the suite's locks (or the sync engine's, for a value from another machine): it must
        /// not flush or modify the suite, nor declare a key. It is `Sendable`, as
        /// a conversion from one value to another needs nothing else.
        public static func converted<Old: Serializable>(
            from formerName: String? = nil, as oldType: Old.Type, _ convert: @escaping @Sendable (Old) -> Value?
        ) -> Self {
            Self(steps: [Step(formerName: formerName, conversion: ClosureConversion<Old, Value>(convert: convert))])
        }

        /// The value a stored object stands for by the conversions that need no closure.
        static func convertedByStandardRules(_ object: Any) -> Value? {
            if let value = Value.value(fromStoredForm: object) {
                return value
            }
            guard let string = object as? String else { return nil }
            if let rawRepresentable = Value.self as? any RawRepresentable.Type,
                let value = Self.value(of: rawRepresentable, rawValue: string)
            {
                return value
            }
            if let decodable = Value.self as? any Decodable.Type,
                let value = try? JSONDecoder().decode(decodable, from: Data(string.utf8)) as? Value
            {
                return value
            }
            return nil
        }

        private static func value<Raw: RawRepresentable>(of type: Raw.Type, rawValue: String) -> Value? {
            (rawValue as? Raw.RawValue).flatMap(Raw.init(rawValue:)) as? Value
        }
    }
}

/// How one former form of a key converts a stored object into the key's value (`nil`: it cannot).
/// Types rather than closures, so that no closure holds the value type's metatype and a
/// migration is checked `Sendable`.
protocol MigrationConversion<Value>: Sendable {
    associatedtype Value: Defaults.Serializable
    func value(from object: Any) -> Value?
    /// Whether only the program can convert (a closure of its own): the schema says so, and the
    /// `defaults` command leaves such a value for the program.
    var isTheProgramsOwn: Bool { get }
}

extension MigrationConversion {
    var isTheProgramsOwn: Bool { false }
}

/// The conversions that need no closure (``Defaults/Migration/renamed(from:_:)``,
/// ``Defaults/Migration/changedType(from:)``).
struct StandardConversion<Value: Defaults.Serializable>: MigrationConversion {
    func value(from object: Any) -> Value? {
        Defaults.Migration<Value>.convertedByStandardRules(object)
    }
}

/// A program's conversion from the `Old` type (``Defaults/Migration/converted(from:as:_:)``).
struct ClosureConversion<Old: Defaults.Serializable, Value: Defaults.Serializable>: MigrationConversion {
    let convert: @Sendable (Old) -> Value?

    var isTheProgramsOwn: Bool { true }

    func value(from object: Any) -> Value? {
        Old.value(fromStoredForm: object).flatMap(convert)
    }
}
