import DefaultsPropertyList
import DefaultsSchema

extension KeySchema {
    /// How a stored `value` the key reads disagrees with its allowed values, as `explain` and the
    /// editor tell it; `nil` when it does not (or the allowed values contradict the key).
    package func allowedValuesNote(for value: PropertyListValue) -> String? {
        guard let allowed = consistentAllowedValues, !allowed.allows(SchemaValue(value)) else { return nil }
        return "not among the values the schema allows (\(allowed.summary)); read as it is"
    }

    /// The default as people read it: its value, `none` or `computed when read`; for
    /// `explain --json`, which escapes per JSON.
    package var defaultText: String {
        defaultValue.map { Output.text(PropertyListValue($0)) } ?? noDefaultText
    }

    /// ``defaultText`` as a line shows it: a string default escaped as one line; marked when it
    /// does not fit its own key, which a program never reads (it reads its own compiled default).
    package var defaultLine: Output.Line {
        guard let defaultValue else { return "\(noDefaultText)" }
        var line: Output.Line = "\(value: PropertyListValue(defaultValue))"
        if defaultValueProblem != nil {
            line += Self.contradictionMark
        }
        return line
    }

    /// What follows a default or allowed values that contradict the key (``KeySchema/problems``).
    package static let contradictionMark: Output.Line = " (does not fit the key; the schema contradicts itself)"

    private var noDefaultText: String {
        isDefaultDynamic ? "computed when read" : "none"
    }
}
