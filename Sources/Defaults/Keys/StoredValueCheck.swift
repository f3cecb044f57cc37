import DefaultsSchema
import Synchronization

/// Tells of a stored value outside a key's range or choices when a read decodes it: logged as a
/// warning through ``Defaults/logger`` in the words the `defaults` command refuses such a value
/// with (``KeySchema/problem(with:)``, the one rule), once per suite and value. The value is read
/// as it is: allowed values do not change what a suite holds, which another program, an older
/// version or a person may have written.
@usableFromInline
final class StoredValueCheck: Sendable {
    /// At most this many values are told of per key, so that a suite filled with ever new values
    /// outside the range cannot grow the set of those told of without end.
    static let reportLimit = 100

    /// The key as the command reads it from the schema, for its allowed values and its words.
    private let schema: KeySchema
    private let allowedValues: AllowedValues
    /// The suites and values told of, as `suite NUL value`.
    private let reported = Mutex<Set<String>>([])

    /// `nil` when the key allows every value of its type, or its allowed values contradict
    /// themselves (the command then holds no value against them either).
    init?(name: String, swiftType: String, type: StoredType?, allowedValues: AllowedValues?) {
        let schema = KeySchema(
            name: name, type: type, swiftType: swiftType, defaultValue: nil, allowedValues: allowedValues)
        guard let allowedValues = schema.consistentAllowedValues else { return nil }
        self.schema = schema
        self.allowedValues = allowedValues
    }

    /// Tells of `object`, read from `suite`, if the key does not allow it.
    @usableFromInline
    func check(_ object: Any, in suite: any DefaultsSuite) {
        guard let value = SchemaValue(storedObject: object), !allowedValues.allows(value),
            let problem = schema.problem(with: value)
        else { return }
        let isNew = reported.withLock { reported in
            guard reported.count < Self.reportLimit else { return false }
            return reported.insert("\(suite.name)\u{0}\(value)").inserted
        }
        guard isNew else { return }
        Defaults.logger.warning(
            "\(problem); the value stored in suite \(suite.name) is read as it is",
            metadata: ["suite": "\(suite.name)", "key": "\(schema.name)"])
    }
}
