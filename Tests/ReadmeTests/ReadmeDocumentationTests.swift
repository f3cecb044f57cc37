import Foundation
import Testing

/// The README's DocC command is the one CI runs, and it builds every catalog the package has.
@Suite("README: the documentation command")
struct ReadmeDocumentationTests {
    let root = ReadmeSnippet.readmeURL.deletingLastPathComponent()

    @Test func theCommandIsTheOneCIRuns() throws {
        let command = "bash Scripts/build-documentation.sh"
        let readme = try String(contentsOf: ReadmeSnippet.readmeURL, encoding: .utf8)
        #expect(readme.contains("\n\(command)\n"), "the README shows no documentation command")
        let ci = try String(contentsOf: root.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.contains("\n\(command)\n"), ".ci/run builds the documentation some other way")
    }

    /// The script finds the catalogs by `Sources/*/*.docc` and builds `Defaults` on its own: every
    /// catalog is there, and the one it builds on its own is one of them.
    @Test func theScriptBuildsEveryCatalog() throws {
        let script = try String(
            contentsOf: root.appendingPathComponent("Scripts/build-documentation.sh"), encoding: .utf8)
        #expect(script.contains("for catalog in Sources/*/*.docc; do"))
        #expect(script.contains("--target Defaults --additional-symbol-graph-dir"))
        let sources = root.appendingPathComponent("Sources")
        let catalogs = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { module in
            FileManager.default.fileExists(atPath: sources.appendingPathComponent("\(module)/\(module).docc").path)
        }
        #expect(catalogs.contains("Defaults") && catalogs.count > 1)
    }
}
