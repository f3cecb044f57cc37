import Defaults
import DefaultsFiles
import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// The schemas programs export (`Defaults.exportSchema()`), found where the XDG base directories
/// put data: `$XDG_DATA_HOME/defaults/schemas/<domain>.json`, then under each of
/// `$XDG_DATA_DIRS` (``SchemaLocations``); the first file found is the domain's schema.
///
/// Only named domains have schemas: the global domain and files given by path have none, and a
/// domain with none is handled exactly as without this catalog.
enum SchemaCatalog {
    /// The largest schema read: a domain of 100,000 described keys fits many times over.
    static let sizeLimit = 16 << 20

    /// A domain's schema and the file it came from.
    struct Found {
        var schema: DomainSchema
        var file: URL
    }

    /// The schema of `domain`, or `nil` when it has none.
    ///
    /// - Throws: ``CommandFailure`` when the first schema file found cannot be read, is not a
    ///   schema, is of a newer format, or names another domain.
    static func schema(of domain: Domain) throws(CommandFailure) -> Found? {
        guard case .named(let name) = domain else { return nil }
        for file in SchemaLocations.candidateFiles(forDomain: name) {
            let data: Data
            do {
                switch try BoundedFileRead.read(file.path, limit: sizeLimit) {
                case .absent: continue
                case .file(_, let read): data = read
                case .notRegularFile(_, let kind): throw failure(file, "it is \(kind)")
                case .tooLarge: throw failure(file, BoundedFileRead.tooLargeReason(limit: sizeLimit))
                case .untrusted(_, let reason): throw failure(file, reason)
                }
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw failure(file, "\(error)")
            }
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

    /// The schema of `domain`, failing when it has none.
    static func require(_ domain: Domain) throws(CommandFailure) -> Found {
        guard let found = try schema(of: domain) else {
            let places = SchemaLocations.searchDirectories().map(\.path).joined(separator: ", ")
            throw CommandFailure(
                "Domain \(domain.displayName) has no schema: none of \(places) holds "
                    + "\(SchemaLocations.fileName(forDomain: domain.displayName) ?? "its schema"); "
                    + "a program writes it with Defaults.exportSchema()")
        }
        return found
    }

    /// The key `key` of `domain`'s schema, failing when the domain has no schema or the schema no
    /// such key.
    static func requireKey(_ key: String, of domain: Domain) throws(CommandFailure) -> (KeySchema, Found) {
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
    /// key's type (`14` as an integer for an integer key, `yes` as a boolean for a boolean key,
    /// any text as a string for a string key); collections and keys of unknown type take
    /// property-list syntax. `nil` when the text is not a value of the key's type.
    func parseUntyped(_ text: String) -> PropertyListValue? {
        let flag: String
        switch type {
        case .string: return .string(text)
        case .integer: flag = "-int"
        case .real: flag = "-float"
        case .boolean: flag = "-bool"
        case .date: flag = "-date"
        case .data: flag = "-data"
        case .array, .dictionary, nil: return try? ValueParsing.bareValue(text)
        }
        return try? ValueParsing.typedValue(flag: flag, text)
    }

    /// Refuses `value` for this key when it does not fit the key's type or allowed values, with a
    /// message naming the key, the domain, what the schema expects and what was given. An integer
    /// written to a float key is stored as a float, as the key reads it.
    func checked(_ value: PropertyListValue, in domain: Domain, schemaFile: URL) throws(CommandFailure)
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
        if let problem = problem(with: SchemaValue(value)) {
            throw CommandFailure(
                "Refused to write \(name) of \(domain.displayName): \(problem) (schema \(schemaFile.path)). "
                    + "Nothing was written.")
        }
        return value
    }
}
