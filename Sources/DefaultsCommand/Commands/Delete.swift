import ArgumentParser
import DefaultsCommandCore

/// `defaults delete domain [key]`.
struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a key, or every key of a domain.",
        discussion: """
            Deleting a domain removes its file (and its lock file); running applications see each key \
            go. A domain file that is a link keeps the link: the file it points to is emptied.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp("The domain (unless -g or --path is given), then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let usage = "defaults delete <domain> [<key>]"
        let domain = try selection.require(from: &arguments, usage: usage)
        guard arguments.count <= 1 else {
            throw CommandFailure.usage("Too many arguments", usage)
        }
        let store = DomainStore()
        let notFound = CommandFailure(
            "Domain (\(domain.displayName)) not found.", then: "Defaults have not been changed.")
        guard let key = arguments.first else {
            guard try store.exists(domain) else { throw notFound }
            try store.remove(domain)
            return
        }
        guard let values = try store.read(domain) else { throw notFound }
        let pairNotFound = CommandFailure(
            "The domain/default pair of (\(domain.displayName), \(key)) does not exist",
            then: "Defaults have not been changed.")
        guard values[key] != nil else { throw pairNotFound }
        try store.change(domain) { (edit) throws(CommandFailure) in
            // Checked again on the values the suite loaded, in case another process removed it.
            guard edit.values[key] != nil else { throw pairNotFound }
            edit.remove(key)
        }
    }
}
