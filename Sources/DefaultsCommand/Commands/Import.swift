import ArgumentParser
import Defaults
import DefaultsCommandCore
import DefaultsFiles
import DefaultsPropertyList
import Foundation

/// `defaults import domain path|-`: replaces a domain with a property-list file.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replace a domain with the dictionary in a property-list file (or - for standard input).",
        discussion: "The file may be an XML, binary or old-style text property list."
    )

    @OptionGroup var input: DomainAndFile

    func run() throws {
        let (domain, source) = try input.resolve(usage: "defaults import <domain> <file | ->")
        let data: Data
        do {
            // Bounded, and a path must be a regular file: a FIFO would wait for a writer forever,
            // `/dev/zero` would fill the memory.
            data = try BoundedFileRead.readInput(source == "-" ? source : (source as NSString).expandingTildeInPath)
        } catch let refusal as FileRefusal {
            throw CommandFailure("Could not read data from \(source): \(refusal)")
        } catch {
            throw CommandFailure("Could not read data from \(source)")
        }
        let values: [String: PropertyListValue]
        switch DomainStore.decodeDictionary(data) {
        case .success(let decoded): values = decoded
        case .failure(let reason):
            throw CommandFailure("Could not import \(source): it is not a property-list dictionary (\(reason))")
        }
        try DomainStore().change(domain, replacingDamaged: true) { edit in edit.replaceAll(with: values) }
    }
}
