import Foundation
import TestSupport
import Testing

/// Every Swift block of the README compiles as written, on its own, in Swift 6 language mode,
/// against the modules this package just built: the README cannot drift from the API.
@Suite("README code blocks", .mayBlock)
struct ReadmeSnippetTests {
    static let snippets = ReadmeSnippet.fromReadme()

    @Test func theReadmeHasSwiftBlocks() {
        #expect(Self.snippets.count >= 7, "found \(Self.snippets.count) in \(ReadmeSnippet.readmeURL.path)")
    }

    @Test(
        .enabled(if: SwiftCompiler.isAvailable, "needs swiftc on PATH"),
        arguments: snippets)
    func compilesAsWritten(_ snippet: ReadmeSnippet) throws {
        let result = try SwiftCompiler.typecheck(program: snippet.code, asManifest: snippet.isManifest)
        #expect(result.status == 0, "README.md:\(snippet.line) does not compile:\n\(result.error)\(result.output)")
    }
}
