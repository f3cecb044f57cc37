import ArgumentParser
import Defaults
import DefaultsCommandCore
import DefaultsPropertyList

/// `defaults read-source domain key`: where the value a program reads comes from.
struct ReadSource: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-source",
        abstract: "Print where a key's value comes from, and its file.",
        discussion: """
            Prints `managed <file>` (enforced by the administrator in <dir>/managed/<domain>.plist \
            of XDG_CONFIG_DIRS), `user <file>` (the user's own file) or `vendor <file>` (the \
            administrator's default in <dir>/<domain>.plist), the first that holds the key. An \
            administrator's value of a type the key of the domain's schema does not read is passed \
            over, as programs pass over it, and said so on standard error. A key in none of them is \
            read from a program's launch arguments or its defaults in code, which only the program \
            knows: the library's FileSuite.valueSource(forKey:) tells those too.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        help: ArgumentHelp("The domain (unless -g or --path is given), then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        let (domain, key) = try selection.requireDomain(
            andOne: "key", from: arguments, usage: "defaults read-source <domain> <key>")
        let store = DomainStore()
        // The layers as `explain` lists them, from the one resolution a write is judged by.
        let resolution = DomainAdministration.resolution(of: domain)
        // A user's file that cannot be read does not hide a value the administrator enforces.
        let user: PropertyListValue?
        if resolution.managedFile(forKey: key) == nil {
            user = try store.read(domain)?[key]
        } else {
            user = try? store.read(domain)?[key]
        }
        let layers = resolution.layers(forKey: key, user: user, userFile: domain.fileURL(in: store.directory))
        DomainAdministration.reportPassedOver(layers, key: key)
        guard let read = layers.readIndex.map({ layers.layers[$0] }) else {
            throw CommandFailure.pairDoesNotExist(domain, key: key)
        }
        Output.print("\(read.kind.rawValue) \(read.file.path)")
    }
}
