import Foundation
import Testing

/// One fenced Swift block of the README or of a DocC article, as written there.
///
/// An article may mark a block, on the lines directly above its fence, with comments DocC does
/// not render: `<!-- snippet: keys -->` names the block `keys`, and `<!-- snippet: after keys -->`
/// compiles the block after the block of the same article named `keys` (and whatever that one
/// comes after), for a block that continues an earlier one, as the reader reads it.
struct ReadmeSnippet: Sendable, CustomTestStringConvertible {
    /// The markdown file, relative to the package's root.
    var file: String
    /// The line of the file the block's code starts on.
    var line: Int
    /// The heading the block stands under.
    var heading: String
    var code: String
    /// The name a `<!-- snippet: name -->` comment gives the block.
    var name: String?
    /// The named block of the same file this block is compiled after.
    var after: String?

    var testDescription: String { "\(file):\(line) (\(heading))" }

    /// Whether the block is a package manifest rather than a program.
    var isManifest: Bool { code.hasPrefix("// swift-tools-version") }

    /// The root of the package this file is in.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The README at the root of the package.
    static let readmeURL = packageRoot.appendingPathComponent("README.md")

    /// Every ```swift block of `text`, the contents of `file`, in order; and what is wrong with its
    /// `<!-- snippet: … -->` comments (one not directly above a Swift block, or not understood).
    static func all(in text: String, file: String = "README.md") -> (snippets: [ReadmeSnippet], problems: [String]) {
        var snippets: [ReadmeSnippet] = []
        var problems: [String] = []
        var heading = "top"
        // The Swift block being read, or whether another fenced block is.
        var current: (snippet: ReadmeSnippet, lines: [Substring])?
        var inOtherBlock = false
        // The snippet comments read since the last line that was not one.
        var marks: [(line: Int, mark: Substring)] = []
        func markProblem(_ line: Int, _ problem: String) {
            problems.append("\(file):\(line): \(problem)")
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let block = current {
                if line.hasPrefix("```") {
                    var snippet = block.snippet
                    snippet.code = block.lines.joined(separator: "\n") + "\n"
                    snippets.append(snippet)
                    current = nil
                } else {
                    current?.lines.append(line)
                }
                continue
            }
            if inOtherBlock {
                inOtherBlock = !line.hasPrefix("```")
                continue
            }
            if let mark = line.wholeMatch(of: #/<!-- snippet: *(.*?) *-->/#)?.output.1 {
                marks.append((index + 1, mark))
                continue
            }
            if line.hasPrefix("```swift") {
                var snippet = ReadmeSnippet(file: file, line: index + 2, heading: heading, code: "")
                for (markLine, mark) in marks {
                    if let other = mark.wholeMatch(of: #/after ([\w-]+)/#)?.output.1, snippet.after == nil {
                        snippet.after = String(other)
                    } else if mark.wholeMatch(of: #/[\w-]+/#) != nil, mark != "after", snippet.name == nil {
                        snippet.name = String(mark)
                    } else {
                        markProblem(markLine, "`\(mark)` is neither a name nor `after <name>` (one of each a block)")
                    }
                }
                current = (snippet, [])
            } else {
                if line.hasPrefix("```") {
                    inOtherBlock = true
                } else if line.hasPrefix("#") {
                    heading = line.drop { $0 == "#" || $0 == " " }.description
                }
                for (markLine, _) in marks {
                    markProblem(markLine, "a snippet comment stands directly above no ```swift block")
                }
            }
            marks = []
        }
        for (markLine, _) in marks {
            markProblem(markLine, "a snippet comment stands directly above no ```swift block")
        }
        if let block = current {
            markProblem(block.snippet.line - 1, "a ```swift block is never closed")
        }
        return (snippets, problems)
    }

    static func fromReadme() -> [ReadmeSnippet] {
        guard let text = try? String(contentsOf: readmeURL, encoding: .utf8) else { return [] }
        return all(in: text).snippets
    }

    /// The markdown files of the package's DocC catalogs (`Sources/<module>/<module>.docc/**/*.md`),
    /// relative to the package's root, in order.
    static let articleFiles: [String] = {
        let sources = packageRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        return files.filter {
            $0.hasSuffix(".md") && $0.split(separator: "/").dropLast().contains { $0.hasSuffix(".docc") }
        }
        .map { "Sources/\($0)" }.sorted()
    }()

    /// Every Swift block of every article, and the problems of their snippet comments.
    static let fromArticles: (snippets: [ReadmeSnippet], problems: [String]) = {
        var snippets: [ReadmeSnippet] = []
        var problems: [String] = []
        for file in articleFiles {
            guard let text = try? String(contentsOf: packageRoot.appendingPathComponent(file), encoding: .utf8)
            else {
                problems.append("\(file): unreadable")
                continue
            }
            let found = all(in: text, file: file)
            snippets += found.snippets
            problems += found.problems
        }
        return (snippets, problems)
    }()
}
