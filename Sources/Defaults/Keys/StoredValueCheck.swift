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

    private struct Told: Hashable {
        var suiteName: String
        var value: SchemaValue
    }

    /// The key as its schema describes it, for its allowed values and its words.
    private let schema: KeySchema
    private let allowedValues: AllowedValues
    /// The hashes of the suites and values told of: a value may be megabytes, and the set keeps
    /// none alive (two values that share a hash are told of once, a loss of no consequence).
    private let told = Mutex<Set<Int>>([])

    /// `nil` when the key allows every value of its type, or its allowed values contradict
    /// themselves (the command then holds no value against them either).
    ///
    /// - Parameter defaultValue: The key's static default in stored form: registered with the
    ///   suite, so a read finds it, but not a stored value (one outside the allowed values is
    ///   reported when the key is declared).
    init?(
        name: String, swiftType: @autoclosure () -> String, defaultValue: @autoclosure () -> SchemaValue?,
        type: @autoclosure () -> StoredType?, allowedValues: AllowedValues?
    ) {
        // Nothing worked out for a key with no range or choices: most keys, at every program's start.
        guard allowedValues != nil else { return nil }
        // The type and default as `Key.schema(meaning:iCloud:)` exports them.
        let defaultValue = defaultValue()
        let schema = KeySchema(
            name: name, type: defaultValue?.storedType ?? type(), swiftType: swiftType(), defaultValue: defaultValue,
            allowedValues: allowedValues)
        guard let consistent = schema.consistentAllowedValues else { return nil }
        self.schema = schema
        self.allowedValues = consistent
    }

    /// Tells of `object`, read from `suite`, if the key does not allow it.
    @usableFromInline
    func check(_ object: Any, in suite: any DefaultsSuite) {
        guard let value = SchemaValue(storedObject: object), value != schema.defaultValue,
            !allowedValues.allows(value.read(as: schema.type))
        else { return }
        let isNew = told.withLock { told in
            told.count < Self.reportLimit && told.insert(Told(suiteName: suite.name, value: value).hashValue).inserted
        }
        guard isNew, let problem = schema.problem(with: value) else { return }
        Defaults.logger.warning(
            "\(problem); the value stored in suite \(suite.name) is read as it is",
            metadata: ["suite": "\(suite.name)", "key": "\(schema.name)"])
    }
}
