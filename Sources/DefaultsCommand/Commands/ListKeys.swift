import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema

/// `defaults keys domain`: every key of the domain's schema, with its type, default, current
/// value and description.
struct ListKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "List the keys a domain's schema declares: type, default, current value, description.",
        discussion: """
            The schema is the file a program exports with Defaults.exportSchema(): \
            $XDG_DATA_HOME/defaults/schemas/<domain>.json (~/.local/share unless set), then \
            defaults/schemas/<domain>.json under each of $XDG_DATA_DIRS (/usr/local/share:/usr/share). \
            The current value is what programs read: the administrator's layers included.
            """
    )

    @Argument(help: "The domain.", completion: .custom(completeDomainNames))
    var domain: String

    func run() throws {
        let domain = try Domain(argument: domain)
        let found = try SchemaCatalog.require(domain)
        let values = try SchemaKeyValues(domain, schema: found.schema)
        var output = Output.BufferedLines()
        for key in found.schema.keys {
            output.print(key.listLine(value: values.current(key.name)))
            if let description = key.description {
                output.print("    \(description)")
            }
        }
        output.flush()
    }
}

extension KeySchema {
    /// `fontSize (integer, Swift.Int) = 14, default 12, allows 8 through 72, syncs`.
    func listLine(value: PropertyListValue?) -> Output.Line {
        // Appended piece by piece into one line: a domain of thousands of keys makes as many lines.
        var line: Output.Line = "\(Output.quotedKey(name)) (\(type?.rawValue ?? "any type"), \(swiftType))"
        if let value {
            line += " = \(value: value)"
        }
        line += ", default \(defaultLine)"
        if let allowedValues {
            line += ", allows \(allowedValues.summary)"
            if !allowedValuesProblems.isEmpty {
                line += Self.contradictionMark
            }
        }
        if iCloud {
            line += ", syncs"
        }
        return line
    }
}
