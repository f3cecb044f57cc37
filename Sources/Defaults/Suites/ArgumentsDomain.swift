import DefaultsPropertyList

/// The arguments domain: `-name value` pairs from a process's launch arguments, as Foundation
/// reads them. Values are property-list text (`5`, `'(a, b)'`, `'<integer>5</integer>'`); a value
/// that does not parse is taken as a plain string.
enum ArgumentsDomain {
    static func parse(_ arguments: some Collection<String>) -> [String: Any] {
        var values: [String: Any] = [:]
        var index = arguments.startIndex
        while index != arguments.endIndex {
            let argument = arguments[index]
            let next = arguments.index(after: index)
            guard argument.count > 1, argument.hasPrefix("-"), argument != "--", next != arguments.endIndex else {
                index = next
                continue
            }
            let text = arguments[next]
            values[String(argument.dropFirst())] = (try? PropertyList.parseText(text)) ?? text
            index = arguments.index(after: next)
        }
        return values
    }
}
