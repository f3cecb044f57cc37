import ArgumentParser
import DefaultsCommandCore
import Foundation

/// `defaults explain domain key`: every layer a read of a key passes through, and the one a
/// program reads.
struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show every layer that holds a key's value, and which one a program reads.",
        discussion: """
            Lists, the lowest first: the default of the domain's schema, each vendor file \
            (<dir>/<domain>.plist of XDG_CONFIG_DIRS), the user's file, and each managed file \
            (<dir>/managed/<domain>.plist), with the value, the file and the key's line in it (XML \
            property lists). The value a program reads is marked *: managed over the user's over \
            vendor over the default, the first directory of XDG_CONFIG_DIRS winning within a layer. \
            An administrator's value that does not fit the key's type in the schema is ignored by \
            reads and marked so. Then says whether the key can be written. A program's launch \
            arguments, and defaults it declares in code without a schema, are its own and not shown. \
            With --json, prints the same as one JSON object (see TheDefaultsCommand in the \
            documentation). Exits 1 when no layer holds the key.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Flag(help: "Print a JSON object instead of text.")
    var json = false

    @Argument(
        help: ArgumentHelp("The domain (unless -g or --path is given), then the key.", valueName: "domain> <key"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        let (domain, key) = try selection.requireDomain(
            andOne: "key", from: arguments, usage: "defaults explain <domain> <key>")
        let explanation = try KeyExplanation.explain(key, of: domain)
        guard !explanation.layers.isEmpty else {
            let failure = CommandFailure(
                "No layer holds \(key) of \(domain.displayName): not the schema, the user's file or an "
                    + "administrator's file")
            throw CommandFailure.renamedKey(key, of: domain, otherwise: failure)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                Output.printJSON(try encoder.encode(explanation))
            } catch {
                throw CommandFailure("Could not encode the explanation: \(error)")
            }
        } else {
            for line in explanation.textLines() {
                Output.print("\(line)")
            }
        }
        for problem in explanation.problems {
            Output.printError(problem)
        }
    }
}
