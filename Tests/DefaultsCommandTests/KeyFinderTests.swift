import Foundation
import TestSupport
import Testing

/// `DefaultsKeyFinder`, the tool behind `DefaultsSchemaPlugin`, run as the plugin runs it: on
/// source files, writing the Swift file the plugin adds to the target.
@Suite("DefaultsSchemaPlugin's key finder", .mayBlock)
struct KeyFinderTests {
    static let path = builtExecutable("DefaultsKeyFinder")

    /// The key paths of the generated file for `source`.
    private func keyPaths(_ source: String) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("key-finder-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("Settings.swift")
        let output = directory.appendingPathComponent("DefaultsDeclaredKeys.swift")
        try Data(source.utf8).write(to: input)
        let run = try ChildProcess.run(Self.path, [output.path, input.path])
        #expect(run.status == 0, "\(run)")
        let generated = try String(contentsOf: output, encoding: .utf8)
        return generated.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return trimmed.hasSuffix(",") ? String(trimmed.dropLast()) : nil
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: path), "built with the tests"))
    func findsTheKeysCodeOfTheModuleCanName() throws {
        let paths = try keyPaths(
            """
            import Defaults

            extension Defaults.Keys {
                static let fontSize = Key<Int>("fontSize", default: 12)
                static let theme: Defaults.Key<String> = .init("theme", default: "light")
                static let `default` = Defaults.Key<Bool>("default", default: false)
                private static let hidden = Key<Int>("hidden", default: 0)
                static var computed: Key<Int> { Key<Int>("computed", default: 0) }
                static let notAKey = 42
                #if os(Linux)
                static let linuxOnly = Key<Int>("linuxOnly", default: 0)
                #endif
            }

            enum BookSettings: Defaults.KeyGroup {
                static let namespace = "book"
                static let id = key("id", default: 0)
                enum Nested: Defaults.KeyGroup {
                    static let namespace = "nested"
                    static let title: Defaults.Key<String?> = key("title")
                }
            }

            private enum Secret: Defaults.KeyGroup {
                static let namespace = "secret"
                static let token = key("token", default: "")
            }

            func local() {
                let key = Defaults.Key<Int>("local", default: 0)
                _ = key
            }
            """)
        #expect(
            paths == [
                "Defaults.Keys.fontSize", "Defaults.Keys.theme", "Defaults.Keys.`default`", "BookSettings.id",
                "BookSettings.Nested.title",
            ])
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: path), "built with the tests"))
    func aFileWithNoKeysGivesAnEmptyList() throws {
        #expect(try keyPaths("let x = 1\n").isEmpty)
    }
}
