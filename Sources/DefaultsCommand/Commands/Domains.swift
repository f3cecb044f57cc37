import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList

/// `defaults domains`: the names of every domain, comma-separated as macOS prints them.
struct Domains: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "domains",
        abstract: "List the domains, comma-separated.",
        discussion: "The global domain is not listed; read it with `defaults read NSGlobalDomain`."
    )

    @Flag(help: "Print a JSON array.")
    var json = false

    func run() throws {
        let names = DomainStore().domainNames()
        if json {
            Output.printJSON(Output.json(.array(names.map(PropertyListValue.string))))
        } else {
            Output.print("\(names.joined(separator: ", "))")
        }
    }
}
