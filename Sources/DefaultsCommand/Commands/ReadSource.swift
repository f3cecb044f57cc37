import ArgumentParser

/// `defaults read-source domain key`: where the value a program reads comes from.
struct ReadSource: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-source",
        abstract: "Print where a key's value comes from, and its file.",
        discussion: """
            Prints `managed <file>` (enforced by the administrator in <dir>/managed/<domain>.plist \
            of XDG_CONFIG_DIRS), `user <file>` (the user's own file) or `vendor <file>` (the \
            administrator's default in <dir>/<domain>.plist), the first that holds the key. A key in \
            none of them is read from a program's launch arguments or its defaults in code, which \
            only the program knows: the library's FileSuite.valueSource(forKey:) tells those too.
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
        let administrator = DomainAdministration.files(forKey: key, in: domain)
        if let managed = administrator.managed {
            Output.print("managed \(managed.path)")
        } else if try store.read(domain)?[key] != nil {
            Output.print("user \(domain.fileURL(in: store.directory).path)")
        } else if let vendor = administrator.vendor {
            Output.print("vendor \(vendor.path)")
        } else {
            throw CommandFailure.pairDoesNotExist(domain, key: key)
        }
    }
}
