import DefaultsSchema
import Foundation
import Synchronization

extension Defaults {
    /// A typed key: a name, a default value and the suite that holds the value.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let quality = Key<Double>("quality", default: 0.8)
    ///     static let name = Key<String?>("name")                   // default: nil
    ///     static let launchedAt = Key<Date>("launchedAt") { .now }  // dynamic default
    /// }
    /// ```
    ///
    /// A static default value is registered with the suite, so that code reading the suite
    /// directly sees it too. A dynamic default is evaluated on each read of a missing value and
    /// not registered.
    public final class Key<Value: Serializable>: Keys, @unchecked Sendable {
        // `@unchecked`: a key never changes after `init`, and its decode cache is behind a Mutex.
        // `Value` need not be Sendable (as in Defaults): each read returns a copy of the default
        // value, so only a default value that is a non-Sendable class instance is shared. A
        // dynamic default need not be Sendable either (as in Defaults): it runs on the reading
        // thread, which its caller takes on (see `UncheckedSendableClosure`).
        enum DefaultSource {
            case value(Value)
            case dynamic(@Sendable () -> Value)
        }

        private let defaultSource: DefaultSource
        @usableFromInline let decodeCache: DecodeCache<Value>?
        /// The value read last and the suite generation it was read at; `nil` for reference types.
        @usableFromInline let readCache = KeyReadCache<Value>()
        /// Whether `Value` is an `Optional`, found once: asking on each write costs a conformance lookup.
        @usableFromInline let isOptional = Value.self is any OptionalProtocol.Type
        /// Tells of a stored value outside the key's range or choices as a read decodes it; `nil`
        /// for a key that allows every value of its type.
        @usableFromInline let storedValueCheck: StoredValueCheck?
        /// Where the key was declared, for ``Defaults/KeyRegistry``.
        let declarationSite: KeyDeclarationSite

        /// The value a read returns when nothing usable is stored.
        public var defaultValue: Value {
            switch defaultSource {
            case .value(let value): value
            case .dynamic(let makeValue): makeValue()
            }
        }

        /// Whether the default value is computed on each read instead of fixed.
        public var isDefaultValueDynamic: Bool {
            if case .dynamic = defaultSource { return true }
            return false
        }

        /// Creates a key with a static default value, registered with `suite`.
        ///
        /// - Parameters:
        ///   - name: The name the value is stored under in the suite.
        ///   - defaultValue: The value a read returns while none is stored.
        ///   - suite: Where the value is stored; the standard suite unless given.
        ///   - iCloud: Sync the value between machines with ``Defaults/iCloud``.
        ///   - description: What the setting means, for people: the `defaults` command and the
        ///     schema show it (``Defaults/exportSchema(of:to:)``). It costs nothing per read or
        ///     write: it is kept in ``Defaults/KeyRegistry``, not on the key.
        ///   - migration: What the key was in an earlier version (another name, another type), so
        ///     that a value stored then becomes its value (see ``Defaults/Migration``); run when the
        ///     key is declared, at no cost when no former name holds a value.
        ///   - file: Where the key is declared, for ``Defaults/KeyRegistry``'s reports; leave the default.
        ///   - line: Where the key is declared, for ``Defaults/KeyRegistry``'s reports; leave the default.
        ///
        /// A `name` that is not ASCII, starts with `@` or holds a `.` is logged as a warning and
        /// listed in ``Defaults/KeyRegistry/nameProblems``; the key works all the same.
        public convenience init(
            _ name: String,
            default defaultValue: Value,
            suite: any DefaultsSuite = Defaults.standardSuite,
            iCloud: Bool = false,
            description: String? = nil,
            migrating migration: Migration<Value>? = nil,
            file: StaticString = #fileID,
            line: UInt = #line
        ) {
            self.init(
                name, defaultSource: .value(defaultValue), suite: suite, iCloud: iCloud,
                meaning: KeyMeaning(description: description), migration: migration,
                site: KeyDeclarationSite(file: file, line: line))
        }

        /// Creates a key whose default value is computed on each read of a missing value.
        ///
        /// - Parameters:
        ///   - name: The name the value is stored under in the suite.
        ///   - suite: Where the value is stored; the standard suite unless given.
        ///   - iCloud: Sync the value between machines with ``Defaults/iCloud``.
        ///   - description: What the setting means, for people, kept in ``Defaults/KeyRegistry``.
        ///   - migration: What the key was in an earlier version (another name, another type), so
        ///     that a value stored then becomes its value (see ``Defaults/Migration``); run when the
        ///     key is declared, at no cost when no former name holds a value.
        ///   - file: Where the key is declared, for ``Defaults/KeyRegistry``'s reports; leave the default.
        ///   - line: Where the key is declared, for ``Defaults/KeyRegistry``'s reports; leave the default.
        ///   - defaultValueGetter: Computes the value a read returns while none is stored. As in
        ///     Defaults, it need not be `Sendable`: it runs on the thread that reads the key.
        public convenience init(
            _ name: String,
            suite: any DefaultsSuite = Defaults.standardSuite,
            iCloud: Bool = false,
            description: String? = nil,
            migrating migration: Migration<Value>? = nil,
            file: StaticString = #fileID,
            line: UInt = #line,
            default defaultValueGetter: @escaping () -> Value
        ) {
            self.init(
                name, defaultSource: .dynamic(UncheckedSendableClosure(defaultValueGetter).call), suite: suite,
                iCloud: iCloud, meaning: KeyMeaning(description: description), migration: migration,
                site: KeyDeclarationSite(file: file, line: line))
        }

        /// Every initializer ends here: the key is registered (with its meaning, which only the
        /// registry keeps), its static default registered with the suite, and a synced key noted.
        init(
            _ name: String,
            defaultSource: DefaultSource,
            suite: any DefaultsSuite,
            iCloud: Bool,
            meaning: KeyMeaning,
            migration: Migration<Value>? = nil,
            site: KeyDeclarationSite
        ) {
            self.defaultSource = defaultSource
            decodeCache = DecodeCache()
            declarationSite = site
            storedValueCheck = StoredValueCheck(
                name: name, swiftType: String(reflecting: Value.self),
                defaultValue: Self.storedForm(of: defaultSource).flatMap(SchemaValue.init(storedObject:)),
                type: inferredStoredType(of: Value.self), allowedValues: meaning.allowedValues)
            super.init(name: name, suite: suite)
            var meaning = meaning
            if let migration {
                meaning.migration = KeyMigration(name: name, migration: migration)
            }
            Defaults.KeyRegistry.register(self, iCloud: iCloud, meaning: meaning)
            if let storedDefault = staticDefaultStoredForm {
                suite.register(defaults: [name: storedDefault])
            }
            // After the key is registered, so that the key's own suite can read it at once; before
            // sync watches it, so that a value an older version left here is a value found on first
            // look (as old as can be), not a change made now that would win over newer ones.
            if let keyMigration = meaning.migration {
                MigrationBatch.declared(self, migration: keyMigration)
            }
            if iCloud { MigrationBatch.declareSynced(self, isMigrating: meaning.migration != nil) }
        }

        /// The static default in the form the suite stores it; `nil` for a dynamic default (or
        /// one with no stored form).
        var staticDefaultStoredForm: Any? {
            Self.storedForm(of: defaultSource)
        }

        private static func storedForm(of defaultSource: DefaultSource) -> Any? {
            guard case .value(let defaultValue) = defaultSource else { return nil }
            return Value.storedForm(of: defaultValue)
        }

        /// The key as its schema shows it, with its `meaning` (which the registry keeps).
        func schema(meaning: KeyMeaning, iCloud: Bool) -> KeySchema {
            let defaultValue = staticDefaultStoredForm.flatMap(SchemaValue.init(storedObject:))
            return meaning.completing(
                KeySchema(
                    name: name,
                    type: defaultValue?.storedType ?? inferredStoredType(of: Value.self),
                    swiftType: String(reflecting: Value.self),
                    defaultValue: defaultValue,
                    isDefaultDynamic: isDefaultValueDynamic,
                    description: meaning.description,
                    allowedValues: meaning.allowedValues,
                    iCloud: iCloud,
                    formerNames: meaning.schemaFormerNames
                ))
        }

        /// Creates a key with a static default value in a `UserDefaults` suite.
        public convenience init(
            _ name: String,
            default defaultValue: Value,
            suite: UserDefaults,
            iCloud: Bool = false,
            description: String? = nil,
            migrating migration: Migration<Value>? = nil,
            file: StaticString = #fileID,
            line: UInt = #line
        ) {
            self.init(
                name, default: defaultValue, suite: UserDefaultsSuite.shared(suite), iCloud: iCloud,
                description: description, migrating: migration, file: file, line: line)
        }

        /// Creates a key with a dynamic default value in a `UserDefaults` suite.
        public convenience init(
            _ name: String,
            suite: UserDefaults,
            iCloud: Bool = false,
            description: String? = nil,
            migrating migration: Migration<Value>? = nil,
            file: StaticString = #fileID,
            line: UInt = #line,
            default defaultValueGetter: @escaping () -> Value
        ) {
            self.init(
                name, suite: UserDefaultsSuite.shared(suite), iCloud: iCloud, description: description,
                migrating: migration, file: file, line: line, default: defaultValueGetter)
        }

        // The read and write paths are inlinable so that code using a key gets a copy specialized
        // for its value type: unspecialized generic decoding costs several times a dictionary lookup.

        /// Decodes a stored property-list object; `nil` if it is not a `Value`.
        @inlinable
        func decode(_ object: Any) -> Value? {
            // A value stored as itself (a number, string, date, or collection of these) needs no bridge.
            if Value.isNativelySupportedType, let value = object as? Value {
                return value
            }
            guard let decodeCache else {
                return Value.value(fromStoredForm: object)
            }
            return decodeCache.value(for: object) {
                Value.value(fromStoredForm: object)
            }
        }

        /// The value a read returns when the suite holds `object`: the decoded object, or the default.
        @inlinable
        func value(fromStored object: Any?) -> Value {
            if let object, let value = decode(object) {
                return value
            }
            return defaultValue
        }

        /// The value of this key in `suite`: what is stored if it decodes, else the default.
        ///
        /// The suite is an existential, not a generic parameter, so that the caller's copy is
        /// specialized for `Value` even when the suite's type is known only at run time.
        ///
        /// While the suite's ``DefaultsSuite/valueGeneration`` is the one the key read at last, the
        /// value read then is returned again: no lookup, cast or decode. A dynamic default is
        /// never kept, as it is computed on each read.
        @inlinable
        func value(in suite: any DefaultsSuite) -> Value {
            guard let readCache, let generation = suite.valueGeneration else {
                if let object = suite.object(forKey: name), let value = decode(object) {
                    storedValueCheck?.check(object, in: suite)
                    return value
                }
                return defaultValue
            }
            if let cached = readCache.value(at: generation) {
                return cached
            }
            // Read after loading the generation: a concurrent write can only make the entry old.
            if let object = suite.object(forKey: name), let value = decode(object) {
                storedValueCheck?.check(object, in: suite)
                readCache.store(value, at: generation)
                return value
            }
            let value = defaultValue
            if !isDefaultValueDynamic {
                readCache.store(value, at: generation)
            }
            return value
        }

        /// Stores `value` in `suite`; `nil` (for an optional key) removes the stored value.
        ///
        /// A value that cannot be serialized is reported and leaves the stored value unchanged.
        @inlinable
        func store(_ value: Value, in suite: any DefaultsSuite) {
            if Value.self == Int.self || Value.self == String.self || Value.self == Double.self
                || Value.self == Bool.self || Value.self == Date.self || Value.self == Data.self
            {
                // Their bridges store the value as itself (checked when specialized, so free).
                suite.set(value, forKey: name)
            } else if isOptional, let optional = value as? any OptionalProtocol, optional.isNil {
                suite.set(nil, forKey: name)
            } else if let object = Value.storedForm(of: value) {
                suite.set(object, forKey: name)
            } else {
                reportUnserializable(in: suite)
            }
        }

        @usableFromInline
        func reportUnserializable(in suite: any DefaultsSuite) {
            suite.reportProblem(SuiteWrite.unserializable(key: name, type: Value.self, suite: suite.name))
        }
    }
}

extension Defaults.Key {
    /// Creates an optional key whose default value is `nil`.
    public convenience init<Wrapped>(
        _ name: String,
        suite: any DefaultsSuite = Defaults.standardSuite,
        iCloud: Bool = false,
        description: String? = nil,
        migrating migration: Defaults.Migration<Value>? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) where Value == Wrapped? {
        self.init(
            name, default: nil, suite: suite, iCloud: iCloud, description: description, migrating: migration,
            file: file, line: line)
    }

    /// Creates an optional key in a `UserDefaults` suite whose default value is `nil`.
    public convenience init<Wrapped>(
        _ name: String,
        suite: UserDefaults,
        iCloud: Bool = false,
        description: String? = nil,
        migrating migration: Defaults.Migration<Value>? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) where Value == Wrapped? {
        self.init(
            name, default: nil, suite: UserDefaultsSuite.shared(suite), iCloud: iCloud, description: description,
            migrating: migration, file: file, line: line)
    }
}
