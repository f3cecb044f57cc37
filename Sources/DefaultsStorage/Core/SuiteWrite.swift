import DefaultsPropertyList
import Foundation

/// The rules of a write of persistent values, whatever door it came through (`set`, `setValues`,
/// `modify`, `Key.store`, `Defaults.modify`, `reset`, a snapshot's transaction, the `defaults`
/// command) and whichever suite it reaches: values are converted to property-list values once,
/// here, and an edit with a value that has none is refused whole, as one ``DefaultsError`` of
/// kind ``DefaultsError/Kind/unsupportedValue``. The administrator's rule is applied by
/// ``SuiteDomains/apply(_:tellsChanges:)``, the one function that changes a suite's domains.
package enum SuiteWrite {
    /// `changes` as property-list values, or the one problem that refuses them all.
    static func convert(
        _ changes: [(key: String, object: Any?)], suite: String, fileURL: URL? = nil
    ) -> Result<[(key: String, value: PropertyListValue?)], DefaultsError> {
        var values: [(key: String, value: PropertyListValue?)] = []
        values.reserveCapacity(changes.count)
        for (key, object) in changes {
            guard let object else {
                values.append((key, nil))
                continue
            }
            guard let value = PropertyListValue.from(object) else {
                return .failure(
                    unsupportedValue(object, forKey: key, suite: suite, fileURL: fileURL, editSize: changes.count))
            }
            values.append((key, value))
        }
        return .success(values)
    }

    /// `object` as a property-list value (`nil` removes), or the problem that refuses it.
    static func convert(
        _ object: Any?, forKey key: String, suite: String, fileURL: URL? = nil
    ) -> Result<PropertyListValue?, DefaultsError> {
        guard let object else { return .success(nil) }
        guard let value = PropertyListValue.from(object) else {
            return .failure(unsupportedValue(object, forKey: key, suite: suite, fileURL: fileURL))
        }
        return .success(value)
    }

    /// The problem of a value with no property-list form: a suite's object, a registered
    /// default (`registering`), or a key's value its bridge could not serialize.
    static func unsupportedValue(
        _ object: Any?, forKey key: String, suite: String, fileURL: URL? = nil, registering: Bool = false,
        editSize: Int = 1
    ) -> DefaultsError {
        let typeName = object.map { "\(type(of: $0))" } ?? "nil"
        let value = registering ? "default value" : "value"
        let outcome =
            registering
            ? "it was not registered"
            : editSize > 1 ? "none of the \(editSize) values written together was stored" : "it was not stored"
        return DefaultsError(
            suite: suite, kind: .unsupportedValue, key: key, fileURL: fileURL,
            message: "the \(value) for key \"\(key)\" of type \(typeName) is not a property-list object; \(outcome)")
    }

    /// The problem of a key's value its bridge could not serialize.
    package static func unserializable(key: String, type: Any.Type, suite: String) -> DefaultsError {
        DefaultsError(
            suite: suite, kind: .unsupportedValue, key: key,
            message:
                "the value for key \"\(key)\" of type \(type) could not be serialized; the stored value is unchanged")
    }
}

/// A suite whose doors (`set`, `setValues`) convert through ``SuiteWrite`` and report through the
/// suite (``SuiteBackend/report(_:)``); each suite only says how it applies converted values as
/// one edit. Every suite of this library is one.
package protocol EditableSuite: DefaultsSuite, SuiteBackend {
    /// Applies `values` as one edit (for a key given twice, the last value wins), and posts one
    /// change event for the keys whose read value changed.
    func apply(_ values: some Collection<(key: String, value: PropertyListValue?)>)
}

extension EditableSuite {
    /// `set(_:forKey:)`: `object` converted, then applied, or reported.
    func write(_ object: Any?, forKey key: String) {
        switch SuiteWrite.convert(object, forKey: key, suite: name, fileURL: problemFileURL) {
        case .success(let value): apply(CollectionOfOne((key: key, value: value)))
        case .failure(let problem): report(problem)
        }
    }

    /// `register(defaults:)`: the defaults that have a property-list form; each other one is
    /// reported, and the rest are registered.
    func registrable(_ defaults: [String: Any]) -> [String: PropertyListValue] {
        var values: [String: PropertyListValue] = [:]
        for (key, object) in defaults {
            guard let value = PropertyListValue.from(object) else {
                report(
                    SuiteWrite.unsupportedValue(
                        object, forKey: key, suite: name, fileURL: problemFileURL, registering: true))
                continue
            }
            values[key] = value
        }
        return values
    }

    /// `setValues(_:)`: every object converted, then applied as one edit, or the edit reported.
    func write(_ changes: [(key: String, object: Any?)]) {
        switch SuiteWrite.convert(changes, suite: name, fileURL: problemFileURL) {
        case .success(let values): apply(values)
        case .failure(let problem): report(problem)
        }
    }
}
