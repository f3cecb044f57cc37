import DefaultsCommandCore
import DefaultsTerminalText
import Foundation

/// Shell completion of the positional arguments of the commands that take a domain: the domain,
/// then a key of that domain (`read d <TAB>`, `delete d <TAB>`), or a file for `export` and
/// `import`. A domain chosen by `-g` or `--path FILE` makes the first argument the key (or file).
enum Completion {
    /// The candidates for `words[index]`, which starts with `prefix`; `words` are the shell words
    /// of the command line, as swift-argument-parser passes them to a custom completion.
    static func candidates(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        // Names come from files that other programs write (domains, keys, a folder's entries). One
        // holding a control (`TerminalText.isControl`) is left out: the shell shows a candidate as
        // it is, so the terminal would obey it, and a line break splits it into two forged
        // candidates. Escaped, as `defaults` prints it, it would complete to a name that does not
        // exist.
        unfiltered(words, index, prefix).filter { !$0.unicodeScalars.contains(where: TerminalText.isControl) }
    }

    private static func unfiltered(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let line = CommandLineWords(words, upTo: index)
        // Which argument after the domain the word is; -1 when it is the domain itself.
        let afterDomain = line.positionals.count - (line.selectedDomain == nil ? 1 : 0)
        if afterDomain < 0 {
            return domainNames(prefix)
        }
        guard afterDomain == 0 else { return [] }
        if line.takesFile {
            return filePaths(prefix)
        }
        guard let domain = line.selectedDomain ?? (try? Domain(argument: line.positionals[0])) else { return [] }
        return keys(of: domain, prefix)
    }

    static func domainNames(_ prefix: String) -> [String] {
        let names = DomainStore().domainNames() + [Domain.globalDomainName]
        return names.filter { $0.hasPrefix(prefix) }
    }

    static func keys(of domain: Domain, _ prefix: String) -> [String] {
        // A domain that cannot be read has nothing to offer; completion never prints errors.
        guard let values = (try? DomainStore().read(domain)) ?? nil else { return [] }
        return values.keys.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// The files and directories (these with a `/`) whose path starts with `prefix`, and `-`
    /// (standard input or output); hidden names only when the prefix asks for them.
    static func filePaths(_ prefix: String) -> [String] {
        let slash = prefix.lastIndex(of: "/")
        let directoryPart = slash.map { String(prefix[...$0]) } ?? ""
        let namePrefix = slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix
        let directory = directoryPart.isEmpty ? "." : (directoryPart as NSString).expandingTildeInPath
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var candidates = names.filter { name in
            name.hasPrefix(namePrefix) && (namePrefix.hasPrefix(".") || !name.hasPrefix("."))
        }
        .map { name in
            var isDirectory: ObjCBool = false
            let path = (directory as NSString).appendingPathComponent(name)
            let suffix =
                FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            return directoryPart + name + (suffix ? "/" : "")
        }
        .sorted()
        if "-".hasPrefix(prefix) {
            candidates.insert("-", at: 0)
        }
        return candidates
    }
}

/// The shell words before the one being completed, read as `defaults <command> [options] <positionals>`.
private struct CommandLineWords {
    /// The command: `read`, `export`, …
    var command: String?
    /// The domain chosen by `-g` or `--path FILE`, if one is.
    var selectedDomain: Domain?
    /// The positional arguments before the word being completed.
    var positionals: [String] = []

    /// Whether the argument after the domain is a file rather than a key.
    var takesFile: Bool { command == "export" || command == "import" }

    init(_ words: [String], upTo index: Int) {
        var iterator = words.prefix(max(0, min(index, words.count))).dropFirst().makeIterator()
        while let word = iterator.next() {
            switch word {
            case "-g", "-globalDomain":
                selectedDomain = .global
            case "--path", "-path":
                if let path = iterator.next() {
                    selectedDomain = .file(path: (path as NSString).expandingTildeInPath)
                }
            case _ where word.hasPrefix("-") && word != "-":
                // Other options (`--json`) and `write`'s type flags take no completion here.
                continue
            default:
                if command == nil { command = word } else { positionals.append(word) }
            }
        }
    }
}
