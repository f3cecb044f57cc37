import ArgumentParser
import Defaults
import DefaultsCommandCore
import DefaultsFiles
import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// `defaults check [domain…]`: the administrator's vendor and managed files checked against the
/// domains' schemas, before they are deployed.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check the domains' schemas, and the administrator's vendor and managed files against them.",
        discussion: """
            For each domain given (or each domain with a trusted schema), checks that the schema \
            agrees with itself (every default, range bound and choice of its key's type, every \
            default among its key's allowed values), then reads <dir>/<domain>.plist and \
            <dir>/managed/<domain>.plist in each directory of XDG_CONFIG_DIRS and checks every value \
            against the key's type and allowed values. Prints one line per problem, naming the file, \
            the key, what the schema expects and what the file holds, and exits 1 if there is any. \
            A key the schema does not know is noted on standard error (the schema lists the keys a \
            program had used when it exported it); it does not fail the check.
            """
    )

    @Argument(
        help: "The domains; every domain with a schema when none is given.", completion: .custom(completeDomainNames))
    var domains: [String] = []

    func run() throws {
        let names = domains.isEmpty ? Self.domainsWithSchemas() : domains
        var problems = 0
        var schemaProblems = 0
        var checkedFiles = 0
        for name in names {
            let domain = try Domain(argument: name)
            let found: SchemaCatalog.Found
            if domains.isEmpty {
                // A domain listed for a schema file passed over (not trusted): the warning says so.
                guard let trusted = try SchemaCatalog.schema(of: domain) else { continue }
                found = trusted
            } else {
                found = try SchemaCatalog.require(domain)
            }
            for problem in found.schema.problems {
                Output.print("\(found.file.path): \(problem)")
                schemaProblems += 1
            }
            for directory in FileSuite.defaultAdministratorDirectories {
                for file in [
                    directory.appendingPathComponent("\(name).plist"),
                    directory.appendingPathComponent("managed/\(name).plist"),
                ] {
                    guard let values = try Self.values(of: file) else { continue }
                    checkedFiles += 1
                    for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                        guard let keySchema = found.schema.key(named: key) else {
                            Output.printError(
                                "\(file.path): \(key) is not in the schema of \(name) (\(found.file.path))")
                            continue
                        }
                        if let problem = keySchema.problem(with: SchemaValue(value)) {
                            Output.print("\(file.path): \(problem)")
                            problems += 1
                        }
                    }
                }
            }
        }
        var failures: [String] = []
        if schemaProblems > 0 {
            let noun = schemaProblems == 1 ? "contradiction" : "contradictions"
            failures.append("\(schemaProblems) \(noun) in the schema")
        }
        if problems > 0 {
            failures.append("\(problems) \(problems == 1 ? "value does" : "values do") not fit the schema")
        }
        guard failures.isEmpty else {
            throw CommandFailure(failures.joined(separator: "; "))
        }
        Output.print("\(checkedFiles) administrator \(checkedFiles == 1 ? "file" : "files") checked, no problem")
    }

    /// The values of an administrator's file, `nil` when there is none; a file that cannot be read
    /// fails the check.
    private static func values(of file: URL) throws(CommandFailure) -> [String: PropertyListValue]? {
        switch SuiteFile(url: file).read() {
        case .absent: return nil
        case .values(let values, _): return values
        case .notRegularFile(_, let kind): throw CommandFailure("\(file.path) is \(kind), not a property-list file")
        case .unreadable(let reason): throw CommandFailure("\(file.path) could not be read: \(reason)")
        case .damaged(_, let reason): throw CommandFailure("\(file.path) is not a valid property list (\(reason))")
        }
    }

    /// Every domain that has a schema file in a schema directory, sorted.
    private static func domainsWithSchemas() -> [String] {
        let names = SchemaLocations.searchDirectories().flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
                .map { String($0.dropLast(".json".count)) }
        }
        return Set(names).sorted()
    }
}
