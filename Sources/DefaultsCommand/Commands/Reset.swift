import ArgumentParser
import DefaultsCommandCore

/// `defaults reset domain [key]`: the user's value of a key removed, so that programs read the
/// vendor's or the code's default again.
struct Reset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Return a key, or every key of a domain's schema, to its default.",
        discussion: """
            Removes the user's value of the key (it is not an error when there is none), so that \
            programs read the administrator's vendor default or the default in their code. Without \
            a key, removes the user's values of every key the domain's schema declares and keeps \
            the others. A key the administrator manages keeps its managed value either way; \
            removing the user's value of one is refused as a write of it is (exit 1, nothing \
            removed), unless the value it enforces is of a type the domain's schema does not read.
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
        let usage = "defaults reset <domain> [<key>]"
        let domain = try selection.require(from: &arguments, usage: usage)
        guard arguments.count <= 1 else { throw CommandFailure.usage("Too many arguments", usage) }
        let keys: [String]
        if let key = arguments.first {
            keys = [key]
        } else {
            keys = try SchemaCatalog.require(domain).schema.keys.map(\.name)
        }
        let store = DomainStore()
        let stored = try store.read(domain) ?? [:]
        guard keys.contains(where: { stored[$0] != nil }) else { return }
        try store.change(domain) { edit in
            // Only the values there are: a key held nowhere is not written, so a key the
            // administrator enforces, which the user's file does not hold, stops nothing.
            for key in keys where edit.values[key] != nil {
                edit.remove(key)
            }
        }
    }
}
