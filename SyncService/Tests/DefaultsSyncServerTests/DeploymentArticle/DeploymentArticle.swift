import Foundation

/// The fenced code blocks of the DocC article `DeployingTheSyncService`, read from the repository,
/// and the few substitutions that let a test run them on this machine.
struct DeploymentArticle {
    /// One fenced block: its language (`sh`, `nginx`, `swift`), its code and the line its fence is on.
    struct Block: Sendable, CustomStringConvertible {
        var language: String
        var code: String
        var line: Int

        var description: String { "DeployingTheSyncService.md:\(line) (\(language))" }
    }

    /// One change from the article's text to the test's: which text, what replaces it, and why.
    struct Substitution: Sendable {
        var article: String
        var test: String
        var why: String
    }

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let url = repository.appendingPathComponent(
        "Sources/DefaultsSyncClient/DefaultsSyncClient.docc/DeployingTheSyncService.md")

    let blocks: [Block]

    init() throws {
        blocks = Self.blocks(in: try String(contentsOf: Self.url, encoding: .utf8))
    }

    /// The fenced blocks of `markdown`, in order.
    static func blocks(in markdown: String) -> [Block] {
        var blocks: [Block] = []
        var open: (language: String, line: Int, lines: [Substring])?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let block = open {
                if line == "```" {
                    blocks.append(
                        Block(language: block.language, code: block.lines.joined(separator: "\n"), line: block.line))
                    open = nil
                } else {
                    open?.lines.append(line)
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), index + 1, [])
            }
        }
        return blocks
    }

    /// The blocks with every substitution made, in the table's order, and the substitutions
    /// that matched nothing (a table gone stale: the article changed under it).
    func substituted(_ table: [Substitution]) -> (blocks: [Block], unmatched: [Substitution]) {
        var blocks = self.blocks
        var unmatched: [Substitution] = []
        for substitution in table {
            var matched = false
            for index in blocks.indices where blocks[index].code.contains(substitution.article) {
                matched = true
                blocks[index].code = blocks[index].code.replacingOccurrences(
                    of: substitution.article, with: substitution.test)
            }
            if !matched { unmatched.append(substitution) }
        }
        return (blocks, unmatched)
    }
}
