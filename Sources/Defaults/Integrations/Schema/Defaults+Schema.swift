import DefaultsFiles
import DefaultsSchema
import Foundation

extension Defaults {
    /// The schema of the keys of `suite` declared so far in this process.
    ///
    /// Every key reports itself to ``KeyRegistry`` when it is created, so no list of keys is kept
    /// by hand; but a `static let` key is created the first time it is used, and a key this
    /// process has not used yet is not in the schema. A name declared more than once (a key and
    /// its copy in another suite, or keys of different types) appears once: the first declaration
    /// with a description, or else the first.
    public static func schema(of suite: any DefaultsSuite = Defaults.standardSuite) -> DomainSchema {
        schema(of: suite, declaring: [])
    }

    /// The schema of the keys of `suite` declared so far in this process, `keys` among them:
    /// naming a `static let` key creates it. What `DefaultsSchemaPlugin`'s generated code calls
    /// with every key its module declares.
    public static func schema(of suite: any DefaultsSuite, declaring keys: [Keys]) -> DomainSchema {
        defer { withExtendedLifetime(keys) {} }
        var chosen: [String: KeySchema] = [:]
        for declaration in KeyRegistry.declarations(in: suite) {
            if let existing = chosen[declaration.name],
                existing.description != nil || declaration.schema.description == nil
            {
                continue
            }
            chosen[declaration.name] = declaration.schema
        }
        return DomainSchema(domain: suite.name, keys: Array(chosen.values))
    }

    /// Writes the schema of `suite`'s keys declared so far where the `defaults` command finds it:
    /// `$XDG_DATA_HOME/defaults/schemas/<suite name>.json` (`~/.local/share` unless set).
    ///
    /// The one line an app adds:
    ///
    /// ```swift
    /// try Defaults.exportSchema()
    /// ```
    ///
    /// With `DefaultsSchemaPlugin` applied to the app's target, that line lists every key the
    /// target declares, used yet or not; without it, the keys used so far (see ``schema(of:)``).
    ///
    /// The file is written atomically, and only when its content changes, so calling this at
    /// every launch costs one read of the file. A package installs the same file under
    /// `/usr/share/defaults/schemas/` for every user.
    ///
    /// - Parameters:
    ///   - suite: The suite whose keys to export; the standard suite unless given.
    ///   - directory: Where to write `<suite name>.json`; the user's schema directory unless given.
    /// - Returns: The schema file.
    /// - Throws: ``DefaultsError`` (``DefaultsError/Kind/writeFailed``) when the suite's name
    ///   cannot be a file name or the file cannot be written, also when a directory above it is
    ///   neither the user's nor root's (the `defaults` command would not trust the file there).
    @discardableResult
    public static func exportSchema(
        of suite: any DefaultsSuite = Defaults.standardSuite, to directory: URL? = nil
    ) throws(DefaultsError) -> URL {
        try exportSchema(of: suite, to: directory, declaring: [])
    }

    /// ``exportSchema(of:to:)`` with `keys` among the keys declared: what the code
    /// `DefaultsSchemaPlugin` generates calls, with every key its module declares.
    @discardableResult
    public static func exportSchema(
        of suite: any DefaultsSuite, to directory: URL?, declaring keys: [Keys]
    ) throws(DefaultsError) -> URL {
        let schema = schema(of: suite, declaring: keys)
        func failure(_ message: String, _ url: URL?, _ error: (any Error)? = nil) -> DefaultsError {
            DefaultsError(
                suite: suite.name, kind: .writeFailed, fileURL: url,
                message: "Could not export the schema of suite \"\(suite.name)\": \(message)", underlyingError: error)
        }
        guard let name = SchemaLocations.fileName(forDomain: suite.name) else {
            throw failure("its name cannot be a file name", nil)
        }
        let folder = directory ?? SchemaLocations.userDirectory()
        let url = folder.appendingPathComponent(name, isDirectory: false)
        let data: Data
        do {
            data = try schema.encoded()
        } catch {
            throw failure("it could not be encoded (\(error))", url, error)
        }
        do {
            // Judged as the `defaults` command judges the user's schemas, before anything is made:
            // never into another user's directory, and another user's identical file is replaced.
            let target = try AtomicFileWrite.target(of: url.path)
            if case .file(_, let existing)? = try? BoundedFileRead.read(
                target, followingLinks: false, ownership: .user),
                existing == data
            {
                return url
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            _ = try AtomicFileWrite.write(data, to: url.path)
        } catch {
            throw failure("\(url.path) could not be written (\(error))", url, error)
        }
        return url
    }
}
