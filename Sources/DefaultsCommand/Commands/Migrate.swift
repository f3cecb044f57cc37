import ArgumentParser
import DefaultsCommandCore

/// `defaults migrate domain [--dry-run]`: values stored under keys' former names moved to the
/// keys' names, as the domain's schema lists them.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move values stored under keys' former names to the keys' names.",
        discussion: """
            Reads the domain's schema (exported by its program) and, for each key it lists with \
            former names, moves a value stored under the newest former name holding one to the \
            key's name, when the key's name holds no value. Moves only rename: a value the key \
            reads as it is moves; one of another type stays, for the program to convert when it \
            starts. A value under \
            a former name whose key already has a value stays where it is, and is printed as kept. \
            All moves are one locked edit of the domain's file. Prints each move (textSize -> \
            fontSize), or "nothing to migrate". --dry-run prints the same and changes nothing.
            """
    )

    @OptionGroup var selection: DomainSelection

    @Flag(help: "Print what would move, and change nothing.")
    var dryRun = false

    @Argument(
        help: ArgumentHelp("The domain.", valueName: "domain"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let usage = "defaults migrate <domain> [--dry-run]"
        let domain = try selection.require(from: &arguments, usage: usage)
        guard arguments.isEmpty else { throw CommandFailure.usage("Too many arguments", usage) }
        let schema = try SchemaCatalog.require(domain).schema
        let store = DomainStore()
        var planned = FormerNameMoves(schema: schema, values: try store.read(domain) ?? [:])
        if !dryRun, !planned.moves.isEmpty {
            // Planned again on the values under the lock, as other processes left them.
            try store.change(domain) { edit in
                planned = FormerNameMoves(schema: schema, values: edit.values)
                planned.apply(to: &edit)
            }
        }
        for line in planned.lines {
            Output.print("\(line)")
        }
    }
}
