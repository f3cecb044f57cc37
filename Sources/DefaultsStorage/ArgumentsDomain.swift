import DefaultsPropertyList

/// The arguments domain: `-name value` pairs from a process's launch arguments, as Foundation
/// reads them. Values are property-list text (`5`, `'(a, b)'`, `'<integer>5</integer>'`); a value
/// that does not parse is taken as a plain string.
///
/// The value ``absentMarker`` (written by ``Defaults/LaunchArguments`` for an optional set to
/// `nil`) stands for "no value": it hides the persistent value, so that a read finds the registered
/// default, or nothing.
package enum ArgumentsDomain {
    /// The argument value that makes a key read as if nothing were stored.
    ///
    /// It is not a property list in any syntax, so Foundation's own argument parsing (on Apple
    /// platforms, for `UserDefaults`) keeps it as this exact string.
    package static let absentMarker = "<swift-defaults:absent/>"

    /// The values by key; `nil` for a key given ``absentMarker``.
    static func parse(_ arguments: some Collection<String>) -> [String: PropertyListValue?] {
        var values: [String: PropertyListValue?] = [:]
        var index = arguments.startIndex
        while index != arguments.endIndex {
            let argument = arguments[index]
            let next = arguments.index(after: index)
            guard argument.count > 1, argument.hasPrefix("-"), argument != "--", next != arguments.endIndex else {
                index = next
                continue
            }
            let text = arguments[next]
            let key = String(argument.dropFirst())
            if text == absentMarker {
                values[key] = .some(nil)
            } else {
                values[key] = (try? PropertyList.parseTextValue(text)) ?? .string(text)
            }
            index = arguments.index(after: next)
        }
        return values
    }
}
