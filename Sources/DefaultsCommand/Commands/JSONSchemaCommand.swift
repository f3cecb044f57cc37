import ArgumentParser
import DefaultsCommandCore
import DefaultsSchema
import Foundation

/// `defaults json-schema domain`: a JSON Schema of the domain's administrator files, for editors.
struct JSONSchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "json-schema",
        abstract: "Print a JSON Schema (draft 2020-12) of a domain's settings, for administrators' editors.",
        discussion: """
            Made from the domain's schema (see `defaults keys`): a property per key with its type, \
            default, description, minimum and maximum from a range and enum from choices; a date is a \
            string of format date-time, data a base64 string; other keys are allowed. An editor given \
            it checks and completes a vendor or managed file written as JSON \
            (then `plutil -convert xml1`), before `defaults check` checks the deployed file.
            """
    )

    @Argument(help: "The domain.", completion: .custom(completeDomainNames))
    var domain: String

    func run() throws {
        let found = try SchemaCatalog.require(try Domain(argument: domain))
        do {
            Output.printJSON(try found.schema.jsonSchema())
        } catch {
            throw CommandFailure("Could not write the JSON Schema of \(domain): \(error)")
        }
    }
}
