import ArgumentParser
import DefaultsCommandCore

/// `defaults read-type domain key`: `Type is integer`, as macOS prints it.
struct ReadType: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-type",
        abstract: "Print the type of a key's value.",
        discussion: "Prints `Type is string`, `integer`, `float`, `boolean`, `date`, `data`, `array` or `dictionary`."
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp("The domain (unless -g or --path is given), then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        let (domain, key) = try selection.requireDomain(
            andOne: "key",
            from: arguments,
            usage: "defaults read-type <domain> <key>"
        )
        guard let value = try DomainStore().read(domain)?[key] else {
            throw CommandFailure.pairDoesNotExist(domain, key: key)
        }
        Output.print("Type is \(value.typeName)")
    }
}
