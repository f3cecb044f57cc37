import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema

/// `defaults describe domain key`: what the domain's schema says about a key.
struct Describe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "describe",
        abstract: "Describe a key of a domain's schema: its meaning, type, default, allowed values and value."
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp("The domain, then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        let (domain, name) = try selection.requireDomain(
            andOne: "key", from: arguments, usage: "defaults describe <domain> <key>")
        let (key, found) = try SchemaCatalog.requireKey(name, of: domain)
        Output.print("\(key.description ?? "(no description)")")
        Output.print("type: \(key.type?.rawValue ?? "any type") (\(key.swiftType))")
        Output.print("default: \(key.defaultLine)")
        if let allowedValues = key.allowedValues {
            let mark: Output.Line = key.allowedValuesProblems.isEmpty ? "" : KeySchema.contradictionMark
            Output.print("allows: \(allowedValues.summary)\(mark)")
        }
        if let value = try SchemaKeyValues(domain, schema: found.schema).current(name) {
            Output.print("value: \(value: value)")
        }
        Output.print("syncs: \(key.iCloud ? "yes" : "no")")
        for problem in key.problems {
            Output.print("problem: \(problem)")
        }
        Output.print("schema: \(found.file.path)")
    }
}
