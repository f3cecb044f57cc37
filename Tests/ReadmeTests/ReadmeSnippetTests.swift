import Foundation
import TestSupport
import Testing

/// Every Swift block of the README compiles as written, on its own, in Swift 6 language mode,
/// against the modules this package just built: the README cannot drift from the API.
@Suite("README code blocks")
struct ReadmeSnippetTests {
    static let snippets = ReadmeSnippet.fromReadme()

    @Test func theReadmeHasSwiftBlocks() {
        #expect(Self.snippets.count >= 7, "found \(Self.snippets.count) in \(ReadmeSnippet.readmeURL.path)")
    }

    @Test(
        .enabled(if: SwiftCompiler.isAvailable, "needs swiftc on PATH"),
        arguments: snippets)
    func compilesAsWritten(_ snippet: ReadmeSnippet) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("readme-\(snippet.line)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A single file is its program's main file: top-level code is allowed, as in a script.
        let file = directory.appendingPathComponent(snippet.isManifest ? "Package.swift" : "main.swift")
        try Data(snippet.code.utf8).write(to: file)
        let result = try SwiftCompiler.typecheck(file, asManifest: snippet.isManifest)
        #expect(result.status == 0, "README.md:\(snippet.line) does not compile:\n\(result.error)\(result.output)")
    }
}
