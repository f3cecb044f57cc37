import ArgumentParser
import Defaults
import DefaultsCommandCore

/// `defaults writable domain key`: whether a write of the key would be read, and why not.
struct Writable: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writable",
        abstract: "Tell whether a key can be changed, and why not.",
        discussion: """
            Prints `true`, or `false` and the administrator's managed file that enforces the key \
            (<dir>/managed/<domain>.plist of XDG_CONFIG_DIRS); exits 0 either way. A managed value \
            of a type the key of the domain's schema does not read enforces nothing: programs pass \
            over it, and `write` writes the key.
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
            andOne: "key", from: arguments, usage: "defaults writable <domain> <key>")
        // As a write judges it: a managed value of a type the schema's key does not read does not
        // enforce the key.
        let resolved = DomainAdministration.resolution(of: domain).resolution(forKey: key)
        for ignored in resolved.ignored where ignored.isManaged {
            Output.printError(
                AdministratorResolution.ignoredMessage(
                    key: key, isManaged: true, file: ignored.file, reason: ignored.unreadable ?? ""))
        }
        switch resolved.writability {
        case .writable: Output.print("true")
        case .managed(let file): Output.print("false: managed by the administrator in \(file?.path ?? "")")
        }
    }
}
