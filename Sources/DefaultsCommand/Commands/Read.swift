import ArgumentParser
import DefaultsPropertyList

/// `defaults read [domain [key]]`: a key's value, a domain, or every domain, as old-style text.
struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Print a key's value, a whole domain, or every domain.",
        discussion: """
            Prints old-style property-list text, as macOS's defaults does: `{ key = value; }` over \
            several lines, a key's string, number or date alone without quotes. --json prints JSON.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Flag(help: "Print JSON instead of old-style property-list text.")
    var json = false

    @Argument(
        help: ArgumentHelp("The domain (unless -g or --path is given), then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let store = DomainStore()
        guard let domain = try selection.take(from: &arguments) else {
            try readAll(store)
            return
        }
        guard arguments.count <= 1 else {
            throw CommandFailure.usage("Too many arguments", "defaults read [<domain> [<key>]]")
        }
        if let key = arguments.first {
            guard let value = try store.read(domain)?[key] else {
                throw CommandFailure.pairDoesNotExist(domain, key: key)
            }
            Output.print(json ? Output.json(value) : Output.text(value))
        } else {
            let values = try store.readExisting(domain)
            Output.print(json ? Output.json(.dictionary(values)) : Output.text(values))
        }
    }

    /// Every domain as one dictionary keyed by domain name, as macOS prints `defaults read`.
    /// Domains that cannot be read are reported on standard error, and the command then fails.
    private func readAll(_ store: DomainStore) throws {
        var everything: [String: PropertyListValue] = [:]
        var failures: [CommandFailure] = []
        for (domain, result) in store.allDomains() {
            switch result {
            case .success(let values): everything[domain.displayName] = .dictionary(values)
            case .failure(let failure): failures.append(failure)
            }
        }
        Output.print(json ? Output.json(.dictionary(everything)) : Output.text(everything))
        if let last = failures.popLast() {
            for failure in failures {
                Output.printError(failure.message)
            }
            throw last
        }
    }
}
