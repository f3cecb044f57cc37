import Foundation
import TestSupport
import Testing

/// Every Swift block of every DocC article compiles as written, in Swift 6 language mode, against
/// the modules this package just built: no example in the documentation can drift from the API.
/// A block is compiled with its catalog's module imported, after the blocks it names with
/// `<!-- snippet: after … -->` (see `ReadmeSnippet`).
@Suite("DocC article code blocks", .mayBlock)
struct ArticleSnippetTests {
    static let snippets = ReadmeSnippet.fromArticles.snippets

    @Test func theArticlesHaveSwiftBlocks() {
        #expect(ReadmeSnippet.articleFiles.count >= 20, "found \(ReadmeSnippet.articleFiles)")
        #expect(
            Self.snippets.count >= 40, "found \(Self.snippets.count) in \(ReadmeSnippet.articleFiles.count) articles")
    }

    @Test func everySnippetCommentIsUnderstood() {
        #expect(ReadmeSnippet.fromArticles.problems == [])
    }

    @Test(
        .enabled(if: SwiftCompiler.isAvailable, "needs swiftc on PATH"),
        arguments: snippets)
    func compilesAsWritten(_ snippet: ReadmeSnippet) throws {
        let program = try snippet.program(among: Self.snippets)
        let unbuilt = SwiftCompiler.packageModules(importedBy: program).subtracting(
            SwiftCompiler.testTargetDependencies)
        #expect(
            unbuilt.isEmpty,
            """
            \(snippet.testDescription) uses \(unbuilt.sorted()), which ReadmeTests does not depend on, so the \
            build need not have made it: add \(unbuilt.sorted().map { "\"\($0)\"" }.joined(separator: ", ")) \
            to the dependencies of the test target ReadmeTests in Package.swift
            """)
        let result = try SwiftCompiler.typecheck(program: program, asManifest: snippet.isManifest)
        #expect(result.status == 0, "\(snippet.testDescription) does not compile:\n\(result.error)\(result.output)")
    }
}
