import Foundation
import TestSupport

/// What keeps a block from being made into a program: a `<!-- snippet: after … -->` naming no block.
struct SnippetProblem: Error, CustomStringConvertible {
    var description: String
}

extension ReadmeSnippet {
    /// The module of the DocC catalog the block is in (`Sources/<module>/<module>.docc/…`), which
    /// an article's block uses without importing it, as the article's reader does; nil in the README.
    var catalogModule: String? {
        let components = file.split(separator: "/")
        guard components.count > 2, components[0] == "Sources", components[2].hasSuffix(".docc") else { return nil }
        return String(components[1])
    }

    /// The file the block is type-checked as: a manifest as written; a program made of the import of
    /// its catalog's module, the blocks it comes after and the block, each under a `#sourceLocation`
    /// of its own lines, so that an error names the line of the markdown file.
    func program(among snippets: [ReadmeSnippet]) throws(SnippetProblem) -> String {
        if isManifest { return code }
        var parts = [self]
        while let name = parts[0].after {
            let named = snippets.filter { $0.file == file && $0.name == name }
            guard named.count == 1 else {
                throw SnippetProblem(
                    description: "\(parts[0].testDescription) comes after `\(name)`, which names "
                        + "\(named.count) Swift blocks of \(file), not one")
            }
            guard !parts.contains(where: { $0.line == named[0].line }) else {
                throw SnippetProblem(description: "\(testDescription) comes after a block that comes after it")
            }
            parts.insert(named[0], at: 0)
        }
        var program = catalogModule.map { "import \($0)\n" } ?? ""
        for part in parts {
            program += "#sourceLocation(file: \"\(part.file)\", line: \(part.line))\n\(part.code)"
        }
        return program + "#sourceLocation()\n"
    }
}

extension SwiftCompiler {
    /// Type-checks `program` (see `typecheck(_:asManifest:)`) as the only file of a temporary folder:
    /// a program's `main.swift`, where top-level code is allowed as in a script, or `Package.swift`.
    static func typecheck(program: String, asManifest: Bool) throws -> ChildProcess.Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("snippet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(asManifest ? "Package.swift" : "main.swift")
        try Data(program.utf8).write(to: file)
        return try typecheck(file, asManifest: asManifest)
    }

    /// The modules of this package (`Sources/<module>`) that `program` imports.
    static func packageModules(importedBy program: String) -> Set<String> {
        let sources = ReadmeSnippet.packageRoot.appendingPathComponent("Sources")
        let modules = Set((try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [])
        let imported = program.split(separator: "\n").compactMap {
            $0.firstMatch(
                of: #/^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?(\w+)/#)
        }
        return Set(imported.map { String($0.output.1) }).intersection(modules)
    }

    /// The targets `ReadmeTests` depends on in `Package.swift`: what the build makes before it
    /// runs these tests, and so the modules a block may import (empty when the manifest does not
    /// read as expected, which every block importing this package's modules then reports).
    static let testTargetDependencies: Set<String> = {
        let manifest = ReadmeSnippet.packageRoot.appendingPathComponent("Package.swift")
        guard let text = try? String(contentsOf: manifest, encoding: .utf8),
            let list = text.firstMatch(of: #/name: "ReadmeTests",\s*dependencies: \[([^\]]*)\]/#)?.output.1
        else { return [] }
        return Set(list.matches(of: #/"(\w+)"/#).map { String($0.output.1) })
    }()
}
