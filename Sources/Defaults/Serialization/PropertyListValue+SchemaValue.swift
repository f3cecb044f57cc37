import DefaultsPropertyList
import DefaultsSchema

/// The one conversion between the property-list values suites hold and the values schemas write,
/// both ways: the library exports with it, and the `defaults` command checks with it.
extension SchemaValue {
    /// A property-list value as a schema writes it.
    package init(_ value: PropertyListValue) {
        switch value {
        case .string(let string): self = .string(string)
        case .integer(let integer): self = .integer(integer)
        case .unsignedInteger(let integer): self = .unsignedInteger(integer)
        case .real(let real): self = .real(real)
        case .boolean(let boolean): self = .boolean(boolean)
        case .date(let date): self = .date(date)
        case .data(let data): self = .data(data)
        case .array(let array): self = .array(array.map(SchemaValue.init))
        case .dictionary(let dictionary): self = .dictionary(dictionary.mapValues(SchemaValue.init))
        }
    }

    /// The stored form of a value a bridge produced (`Value.storedForm(of:)`); `nil` when it is
    /// not a property-list object.
    package init?(storedObject object: Any) {
        guard let value = PropertyListValue.from(object) else { return nil }
        self.init(value)
    }
}

extension PropertyListValue {
    /// A schema's value as a suite holds it.
    package init(_ value: SchemaValue) {
        switch value {
        case .string(let string): self = .string(string)
        case .integer(let integer): self = .integer(integer)
        case .unsignedInteger(let integer): self = .unsignedInteger(integer)
        case .real(let real): self = .real(real)
        case .boolean(let boolean): self = .boolean(boolean)
        case .date(let date): self = .date(date)
        case .data(let data): self = .data(data)
        case .array(let array): self = .array(array.map(PropertyListValue.init))
        case .dictionary(let dictionary): self = .dictionary(dictionary.mapValues(PropertyListValue.init))
        }
    }
}
