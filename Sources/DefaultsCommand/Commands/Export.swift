import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList
import Foundation

/// `defaults export domain path|-`: the domain as an XML property list.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a domain to a file (or - for standard output) as an XML property list."
    )

    @OptionGroup var input: DomainAndFile

    func run() throws {
        let (domain, target) = try input.resolve(usage: "defaults export <domain> <file | ->")
        let values = try DomainStore().readExisting(domain)
        let data: Data
        do {
            data = try PropertyList.encodeXML(values)
        } catch {
            throw CommandFailure("Could not export domain \(domain.displayName): \(error)")
        }
        if target == "-" {
            Output.writeValue(data)
            return
        }
        let path = (target as NSString).expandingTildeInPath
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure("Could not write to \(path): \(error.localizedDescription)")
        }
    }
}
