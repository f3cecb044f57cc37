import Foundation
import Testing

/// The README's DocC command builds every catalog the package has.
@Suite("README: the documentation command")
struct ReadmeDocumentationTests {
    @Test func theCommandNamesEveryCatalog() throws {
        let readme = try String(contentsOf: ReadmeSnippet.readmeURL, encoding: .utf8)
        let command = try #require(
            readme.firstMatch(of: #/\nswift package generate-documentation((?:\\\n|[^\n])*)/#), "no DocC command")
        let named = Set(command.output.1.matches(of: #/--target (\w+)/#).map { String($0.output.1) })
        let sources = ReadmeSnippet.readmeURL.deletingLastPathComponent().appendingPathComponent("Sources")
        let catalogs = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { module in
            FileManager.default.fileExists(atPath: sources.appendingPathComponent("\(module)/\(module).docc").path)
        }
        #expect(!catalogs.isEmpty)
        #expect(named == Set(catalogs))
    }
}
