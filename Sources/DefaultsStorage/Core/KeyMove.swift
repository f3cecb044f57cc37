import DefaultsPropertyList

/// A value moved by a migration, from a former name (or the key's own, converted in place) to
/// the key's name: applied by ``SuiteDomains/apply(_:tellsChanges:)`` only where `from` still
/// holds `expected` and `to` holds nothing (unless it is `from`), so that a move planned on values
/// that changed since is not made.
package struct KeyMove: Sendable, Equatable {
    package var from: String
    package var to: String
    package var expected: PropertyListValue
    package var value: PropertyListValue

    package init(from: String, to: String, expected: PropertyListValue, value: PropertyListValue) {
        self.from = from
        self.to = to
        self.expected = expected
        self.value = value
    }
}

extension KeyMove {
    /// A move of `value` from `formerName` to `key`, made where `formerName` still holds it and
    /// `key` holds nothing (for the `defaults` command's `migrate`, which only renames).
    package init(renaming formerName: String, to key: String, value: PropertyListValue) {
        self.init(from: formerName, to: key, expected: value, value: value)
    }
}
