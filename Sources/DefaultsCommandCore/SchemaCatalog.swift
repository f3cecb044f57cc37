import Defaults
import DefaultsFiles
import DefaultsPropertyList
import DefaultsSchema
import Foundation
import Synchronization

/// The schemas programs export (`Defaults.exportSchema()`), found where the XDG base directories
/// put data: `$XDG_DATA_HOME/defaults/schemas/<domain>.json`, then under each of
/// `$XDG_DATA_DIRS` (``SchemaLocations``); the first file found and trusted is the domain's
/// schema.
///
/// A schema decides what `keys` and `describe` tell a person and which writes are refused, so it
/// is trusted as the files of its place are (``FileOwnership``): in `$XDG_DATA_HOME`, as the
/// user's own files (the user's or root's, in directories that are; the user's own links
/// followed); in a directory of `$XDG_DATA_DIRS`, as the administrator's files (root's or the
/// owner of that directory's, writable by nobody else, never a link, in directories up to it
/// that pass the same rule). A file that is not trusted is passed over with a warning, and the
/// search goes on.
///
/// Only named domains have schemas: the global domain and files given by path have none, and a
/// domain with none is handled exactly as without this catalog.
package enum SchemaCatalog {
    /// The largest schema read: a domain of 100,000 described keys fits many times over.
    package static let sizeLimit = 16 << 20

    /// A domain's schema and the file it came from.
    package struct Found {
        package var schema: DomainSchema
        package var file: URL
    }

    /// The schema of `domain`, or `nil` when it has none.
    ///
    /// - Throws: ``CommandFailure`` when the first schema file found and trusted cannot be read,
    ///   is not a schema, is of a newer format, or names another domain.
    package static func schema(of domain: Domain) throws(CommandFailure) -> Found? {
        guard case .named(let name) = domain, let fileName = SchemaLocations.fileName(forDomain: name) else {
            return nil
        }
        for place in places() {
            let file = place.directory.appendingPathComponent(fileName, isDirectory: false)
            guard let data = try trustedContents(of: file, in: place) else { continue }
            let schema: DomainSchema
            do {
                schema = try DomainSchema.decode(from: data)
            } catch let error as DecodingError {
                throw failure(file, "it is not a schema (\(describe(error)))")
            } catch {
                throw failure(file, "\(error)")
            }
            guard schema.domain == name else {
                throw failure(file, "it is the schema of domain \(schema.domain)")
            }
            return Found(schema: schema, file: file)
        }
        return nil
    }

    // MARK: Trust

    /// A schema directory and whose files it trusts.
    private struct Place {
        package var directory: URL
        /// The directory of `$XDG_DATA_DIRS` it is under; `nil` for the user's (`$XDG_DATA_HOME`).
        package var systemBase: URL?
    }

    /// The schema directories in the order they are searched: the user's, then the system's.
    private static func places() -> [Place] {
        let depth = SchemaLocations.subdirectory.split(separator: "/").count
        return SchemaLocations.searchDirectories().enumerated().map { index, directory in
            guard index > 0 else { return Place(directory: directory) }
            var base = directory
            for _ in 0..<depth {
                base.deleteLastPathComponent()
            }
            return Place(directory: directory, systemBase: base)
        }
    }

    /// The bytes of the schema file `file` in `place`; `nil` when there is none, or when it is
    /// not trusted (then passed over with a warning).
    private static func trustedContents(of file: URL, in place: Place) throws(CommandFailure) -> Data? {
        let outcome: BoundedFileRead.Outcome
        do {
            // Nothing there: no directory is judged, and nothing is said.
            guard try PosixFile.linkStatus(file.path) != nil else { return nil }
            if let base = place.systemBase {
                // As the administrator's files (`FileSuite`'s administrator layers) are judged.
                guard let owner = try PosixFile.status(base.path)?.st_uid else { return nil }
                let rule = FileOwnership.administrator(directoryOwner: owner)
                try rule.checkDirectories(above: file.path, through: base.path)
                outcome = try BoundedFileRead.read(file.path, limit: sizeLimit, followingLinks: false, ownership: rule)
            } else {
                // As the user's own suite files are judged (`SuiteFile.read`).
                let end = try AtomicFileWrite.endOfLinks(file.path).path
                try FileOwnership.user.checkDirectories(above: end)
                outcome = try BoundedFileRead.read(end, limit: sizeLimit, followingLinks: false, ownership: .user)
            }
        } catch let refusal as FileRefusal {
            passOver(file, refusal.description)
            return nil
        } catch let error as SystemCallError where error.code == ELOOP && place.systemBase != nil {
            passOver(file, "it is a symbolic link, which a schema of \(place.directory.path) may not be")
            return nil
        } catch {
            throw failure(file, "\(error)")
        }
        switch outcome {
        case .absent: return nil
        case .file(_, let data): return data
        case .notRegularFile(_, let kind): throw failure(file, "it is \(kind)")
        case .tooLarge: throw failure(file, BoundedFileRead.tooLargeReason(limit: sizeLimit))
        case .untrusted(_, let reason):
            passOver(file, reason)
            return nil
        }
    }

    /// The schema files passed over so far: each is warned about once, however many times a
    /// command looks for its domain's schema.
    private static let passedOver = Mutex<Set<String>>([])

    private static func passOver(_ file: URL, _ reason: String) {
        guard passedOver.withLock({ $0.insert(file.path).inserted }) else { return }
        Output.printError("warning: passed over the schema \(file.path): \(reason)")
    }

    /// The schema of `domain`, failing when it has none.
    package static func require(_ domain: Domain) throws(CommandFailure) -> Found {
        guard let found = try schema(of: domain) else {
            let searched = SchemaLocations.searchDirectories().map(\.path).joined(separator: ", ")
            let fileName = SchemaLocations.fileName(forDomain: domain.displayName)
            let wasPassedOver = fileName.map { name in
                passedOver.withLock { files in
                    places().contains { files.contains($0.directory.appendingPathComponent(name).path) }
                }
            }
            throw CommandFailure(
                "Domain \(domain.displayName) has no schema: none of \(searched) holds "
                    + (wasPassedOver == true ? "a trusted " : "") + "\(fileName ?? "its schema"); "
                    + "a program writes it with Defaults.exportSchema()")
        }
        return found
    }

    /// The key `key` of `domain`'s schema, failing when the domain has no schema or the schema no
    /// such key.
    package static func requireKey(_ key: String, of domain: Domain) throws(CommandFailure) -> (KeySchema, Found) {
        let found = try require(domain)
        guard let keySchema = found.schema.key(named: key) else {
            throw CommandFailure("The schema of \(domain.displayName) (\(found.file.path)) has no key \(key)")
        }
        return (keySchema, found)
    }

    private static func failure(_ file: URL, _ reason: String) -> CommandFailure {
        CommandFailure("The schema \(file.path) could not be read: \(reason)")
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "at \(path): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

extension KeySchema {
    /// The value `text` stands for when written without a type flag to this key: read as the
    /// key's type (``ValueParsing/value(_:as:)``). `nil` when the text is not a value of the
    /// key's type.
    package func parseUntyped(_ text: String) -> PropertyListValue? {
        try? ValueParsing.value(text, as: type)
    }

    /// Refuses `value` for this key when it does not fit the key's type or allowed values, with a
    /// message naming the key, the domain, what the schema expects and what was given; allowed
    /// values that contradict the key's type or themselves are not held against it (a warning
    /// says so), as ``KeySchema/problem(with:)`` judges. An integer written to a float key is
    /// stored as a float, as the key reads it.
    package func checked(_ value: PropertyListValue, in domain: Domain, schemaFile: URL) throws(CommandFailure)
        -> PropertyListValue
    {
        var value = value
        if type == .real {
            switch value {
            case .integer(let integer): value = .real(Double(integer))
            case .unsignedInteger(let integer): value = .real(Double(integer))
            default: break
            }
        }
        if !allowedValuesProblems.isEmpty {
            let contradictions = allowedValuesProblems.joined(separator: "; ")
            Output.printError(
                "warning: the schema \(schemaFile.path) contradicts itself (\(contradictions)): "
                    + "\(name) is checked against its type only")
        }
        if let problem = problem(with: SchemaValue(value)) {
            throw CommandFailure(
                "Refused to write \(name) of \(domain.displayName): \(problem) (schema \(schemaFile.path)). "
                    + "Nothing was written.")
        }
        return value
    }
}
