import Foundation
import Testing

/// One fenced Swift block of the README, as written there.
struct ReadmeSnippet: Sendable, CustomTestStringConvertible {
    /// The line of the README the block's code starts on.
    var line: Int
    /// The heading the block stands under.
    var heading: String
    var code: String

    var testDescription: String { "README.md:\(line) (\(heading))" }

    /// Whether the block is a package manifest rather than a program.
    var isManifest: Bool { code.hasPrefix("// swift-tools-version") }

    /// The README at the root of the package this file is in.
    static let readmeURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")

    /// Every ```swift block of `text`, in order.
    static func all(in text: String) -> [ReadmeSnippet] {
        var snippets: [ReadmeSnippet] = []
        var heading = "top"
        var current: (line: Int, lines: [Substring])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if var block = current {
                if line.hasPrefix("```") {
                    snippets.append(
                        ReadmeSnippet(
                            line: block.line, heading: heading, code: block.lines.joined(separator: "\n") + "\n"))
                    current = nil
                } else {
                    block.lines.append(line)
                    current = block
                }
            } else if line.hasPrefix("```swift") {
                current = (index + 2, [])
            } else if line.hasPrefix("#") {
                heading = line.drop { $0 == "#" || $0 == " " }.description
            }
        }
        return snippets
    }

    static func fromReadme() -> [ReadmeSnippet] {
        guard let text = try? String(contentsOf: readmeURL, encoding: .utf8) else { return [] }
        return all(in: text)
    }
}
