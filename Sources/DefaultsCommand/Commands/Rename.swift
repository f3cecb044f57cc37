import ArgumentParser
import DefaultsCommandCore

/// `defaults rename domain old new`.
struct Rename: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Rename a key, keeping its value.",
        discussion: "A value already stored under the new name is replaced."
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp(
            "The domain (unless -g or --path is given), the key, then its new name.", valueName: "domain> <old> <new"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let usage = "defaults rename <domain> <old key> <new key>"
        let domain = try selection.require(from: &arguments, usage: usage)
        guard arguments.count == 2 else {
            throw CommandFailure.usage(arguments.count < 2 ? "Missing key" : "Too many arguments", usage)
        }
        let (old, new) = (arguments[0], arguments[1])
        let missing = CommandFailure(
            "Key \(old) does not exist in domain \(domain.displayName); leaving defaults unchanged")
        let store = DomainStore()
        guard try store.read(domain)?[old] != nil else { throw missing }
        guard old != new else { return }
        try store.change(domain) { (edit) throws(CommandFailure) in
            guard let value = edit.values[old] else { throw missing }
            edit.set(value, forKey: new)
            edit.remove(old)
        }
    }
}
