import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList
import Foundation

/// `defaults find word`: every key whose name or value holds the word, in every domain.
struct Find: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find",
        abstract: "Find keys whose name or value contains a word, in every domain.",
        discussion: """
            The search ignores case. A domain whose name contains the word is printed whole. \
            Prints `Found <n> keys in domain '<domain>': { … }` for each domain, as macOS does.
            """
    )

    @Flag(help: "Print a JSON object: each domain with the keys found in it.")
    var json = false

    @Argument(help: "The word to look for.")
    var word: String

    func run() throws {
        var found: [(domain: String, values: [String: PropertyListValue])] = []
        var failures: [CommandFailure] = []
        for (domain, result) in DomainStore().allDomains() {
            switch result {
            case .success(let values):
                let matches = Self.matches(in: values, domain: domain.displayName, word: word)
                if !matches.isEmpty {
                    found.append((domain.displayName, matches))
                }
            case .failure(let failure):
                failures.append(failure)
            }
        }
        if json {
            Output.printJSON(
                Output.json(
                    .dictionary(
                        Dictionary(
                            found.map { ($0.domain, PropertyListValue.dictionary($0.values)) },
                            uniquingKeysWith: { first, _ in first }))))
        } else if found.isEmpty {
            Output.print("No domain, key, nor value containing '\(word)'")
        } else {
            for (domain, values) in found {
                Output.print("Found \(values.count) keys in domain '\(domain)': \(value: .dictionary(values))")
            }
        }
        if let last = failures.popLast() {
            for failure in failures {
                Output.printError(failure)
            }
            throw last
        }
    }

    /// The entries of `values` that match: all of them when the domain's name contains `word`,
    /// else those whose key, or whose value as `read` prints it, contains it (ignoring case).
    static func matches(
        in values: [String: PropertyListValue], domain: String, word: String
    ) -> [String: PropertyListValue] {
        func contains(_ text: String) -> Bool {
            text.range(of: word, options: [.caseInsensitive]) != nil
        }
        if contains(domain) {
            return values
        }
        return values.filter { key, value in contains(key) || contains(Output.text(value)) }
    }
}
