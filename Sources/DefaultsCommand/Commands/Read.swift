import ArgumentParser
import Defaults
import DefaultsCommandCore
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

    @Flag(
        help: """
            Print the values a program reads: the administrator's enforced (managed) values over \
            the user's over the vendor defaults, from XDG_CONFIG_DIRS.
            """)
    var effective = false

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
        let user = try store.read(domain)
        var values = user
        if effective {
            values = effectiveValues(of: domain, user: user ?? [:], key: arguments.first, store: store)
        }
        if let key = arguments.first {
            guard let value = values?[key] else {
                let failure = notFound(CommandFailure.pairDoesNotExist(domain, key: key), domain: domain, key: key)
                throw CommandFailure.renamedKey(key, of: domain, otherwise: failure)
            }
            json ? Output.printJSON(Output.json(value)) : Output.printValue(value)
        } else {
            guard let values, !values.isEmpty || !domain.isAbsentWhenEmpty else {
                throw notFound(.domainDoesNotExist(domain), domain: domain, key: nil)
            }
            json ? Output.printJSON(Output.json(.dictionary(values))) : Output.printValue(values)
        }
    }

    /// What programs read from `domain` whose user's file holds `user` (of `key`, or every key),
    /// telling on standard error of each administrator's value a read passes over.
    private func effectiveValues(
        of domain: Domain, user: [String: PropertyListValue], key: String?, store: DomainStore
    ) -> [String: PropertyListValue] {
        let resolution = DomainAdministration.resolution(of: domain)
        let userFile = domain.fileURL(in: store.directory)
        for name in key.map({ [$0] }) ?? resolution.heldKeys.sorted() {
            let layers = resolution.layers(forKey: name, user: user[name], userFile: userFile)
            DomainAdministration.reportPassedOver(layers, key: name)
        }
        return resolution.resolvedValues(user: user)
    }

    /// `failure`, saying when the administrator sets values that `--effective` would show.
    private func notFound(_ failure: CommandFailure, domain: Domain, key: String?) -> CommandFailure {
        guard !effective else { return failure }
        let resolution = DomainAdministration.resolution(of: domain)
        let administrator = (managed: resolution.managedValues, vendor: resolution.vendorValues)
        let managed = key.map { administrator.managed[$0] != nil ? 1 : 0 } ?? administrator.managed.count
        let vendor = key.map { administrator.vendor[$0] != nil ? 1 : 0 } ?? administrator.vendor.count
        guard managed + vendor > 0 else { return failure }
        var hinted = failure
        hinted.message +=
            " among the user's values, but the administrator sets \(managed) managed and \(vendor) vendor "
            + "value(s) for it; `defaults read --effective \(domain.displayName)\(key.map { " \($0)" } ?? "")` "
            + "prints what programs read"
        return hinted
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
        json ? Output.printJSON(Output.json(.dictionary(everything))) : Output.printValue(everything)
        if let last = failures.popLast() {
            for failure in failures {
                Output.printError(failure)
            }
            throw last
        }
    }
}
