import DefaultsPropertyList
import DefaultsSchema
import Foundation

extension Defaults {
    /// One declaration of a key, as ``KeyRegistry`` records it: which name, in which suite, of
    /// which value type, and where in the source.
    public struct KeyDeclaration: Sendable, Hashable, CustomStringConvertible {
        /// The name the value is stored under.
        public let name: String
        /// The name of the key's suite.
        public let suiteName: String
        /// The key's value type.
        public let valueType: any Any.Type
        /// The file that declares the key, as `#fileID` gives it (`MyApp/Settings.swift`).
        public let file: String
        /// The line that declares the key.
        public let line: UInt
        /// The key as its schema shows it: stored type, default in stored form, description,
        /// allowed values and whether it syncs (see ``Defaults/exportSchema(of:to:)``).
        ///
        /// Made when asked for, not when the key is declared: type names and the default's
        /// stored form cost a program's start, and only a schema's export reads them.
        public var schema: KeySchema {
            // A key that is gone is described by what its declaration knows.
            makeSchema()
                ?? meaning.completing(
                    KeySchema(
                        name: name, type: inferredStoredType(of: valueType), swiftType: String(reflecting: valueType),
                        defaultValue: nil, description: meaning.description, allowedValues: meaning.allowedValues,
                        iCloud: iCloud, formerNames: meaning.schemaFormerNames))
        }
        /// The key's schema while the key exists.
        let makeSchema: @Sendable () -> KeySchema?
        /// Whether the key reads a stored value as its type; `nil` once the key is gone.
        let reads: @Sendable (PropertyListValue) -> Bool?
        let meaning: KeyMeaning
        let iCloud: Bool

        /// The value type compared for collisions: optionals unwrapped, since `Int` and `Int?`
        /// store the same thing.
        var storedType: ObjectIdentifier {
            ObjectIdentifier(unwrappedValueType(valueType))
        }

        /// `Key<Int>("volume") at MyApp/Settings.swift:12`.
        public var description: String {
            "Key<\(String(reflecting: valueType))>(\"\(name)\") at \(file):\(line)"
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.name == rhs.name && lhs.suiteName == rhs.suiteName
                && ObjectIdentifier(lhs.valueType) == ObjectIdentifier(rhs.valueType)
                && lhs.file == rhs.file && lhs.line == rhs.line
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(suiteName)
            hasher.combine(ObjectIdentifier(valueType))
            hasher.combine(file)
            hasher.combine(line)
        }
    }
}

/// A key that can tell its schema, and whether it reads a stored value, whatever its value type.
protocol SchemaDescribingKey: AnyObject, Sendable {
    func schema(meaning: KeyMeaning, iCloud: Bool) -> KeySchema
    func reads(_ value: PropertyListValue) -> Bool
}

extension Defaults.Key: SchemaDescribingKey {
    /// Whether `value`, stored under the key's name, reads as a `Value` (not as the default).
    func reads(_ value: PropertyListValue) -> Bool {
        decode(value.object) != nil
    }
}

/// Where a key is declared: the `#fileID` and `#line` its initializer was called from.
struct KeyDeclarationSite: Sendable {
    let file: StaticString
    let line: UInt
}

/// The property-list type a value of `type` is stored as, when the type alone tells (for a key
/// with no default to look at: an optional whose default is `nil`, a dynamic default).
func inferredStoredType(of type: Any.Type) -> StoredType? {
    switch unwrappedValueType(type) {
    case is any BinaryInteger.Type: .integer
    case is any BinaryFloatingPoint.Type: .real
    case is Bool.Type: .boolean
    case is String.Type: .string
    case is Date.Type: .date
    case is Data.Type: .data
    default: nil
    }
}

/// Lets the registry see through `Optional` to the type a key stores.
private protocol OptionalValueType {
    static var wrappedValueType: Any.Type { get }
}

extension Optional: OptionalValueType {
    fileprivate static var wrappedValueType: Any.Type {
        unwrappedValueType(Wrapped.self)
    }
}

private func unwrappedValueType(_ type: Any.Type) -> Any.Type {
    (type as? any OptionalValueType.Type)?.wrappedValueType ?? type
}
