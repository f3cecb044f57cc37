import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema

/// `defaults range domain key`: the values a key allows, as `gsettings range` prints them.
struct RangeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "range",
        abstract: "Print the values a key of a domain's schema allows.",
        discussion: """
            Prints `type <type>` for a key that allows any value of its type, `range <type> <low> <high>` \
            for a range, or `choices <type>` and then each choice on a line of its own.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp("The domain, then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        let (domain, name) = try selection.requireDomain(
            andOne: "key", from: arguments, usage: "defaults range <domain> <key>")
        let (key, _) = try SchemaCatalog.requireKey(name, of: domain)
        let type = key.type?.rawValue ?? "any"
        func text(_ value: SchemaValue) -> Output.Line { "\(value: PropertyListValue(value))" }
        switch key.allowedValues {
        case nil:
            Output.print("type \(type)")
        case .range(let lowerBound, let upperBound):
            Output.print("range \(type) \(text(lowerBound)) \(text(upperBound))")
        case .choices(let choices):
            Output.print("choices \(type)")
            for choice in choices {
                Output.print(text(choice))
            }
        }
    }
}
