import Foundation

/// One key tokens are signed with, and its id (the `kid` of the tokens it signs), so that a
/// deployment can rotate keys: verify with the old and the new while tokens of both are about,
/// sign with the new, then drop the old.
///
/// A key read from a file takes its id from the file's name without `.key`: `2025-06.key` holds
/// the key `2025-06`.
public struct AccessTokenKey: Sendable {
    /// The fewest bytes a key may have: a shorter one can be guessed.
    public static let minimumBytes = 32
    /// The most bytes read from a key file.
    static let maximumFileBytes = 64 * 1024
    /// The longest id.
    static let maximumIDLength = 64

    /// The key's id: 1 to 64 letters, digits, `.`, `_` or `-`.
    public let id: String
    /// The secret.
    let bytes: [UInt8]

    /// A key of at least ``minimumBytes`` bytes, named `id`.
    public init(id: String, bytes: some DataProtocol) throws(AccessTokenError) {
        guard Self.isValid(id: id) else { throw .invalidKeyID(id) }
        guard bytes.count >= Self.minimumBytes else { throw .keyTooShort(bytes.count) }
        self.id = id
        self.bytes = Array(bytes)
    }

    /// Reads the key from `path`: a regular file (not a link) of ``minimumBytes`` to 64 KB that
    /// only its owner, the server's user or root, may read or write. Its id is the file's name
    /// without `.key`.
    public init(file path: String) throws(AccessTokenError) {
        let key: Data
        do {
            key = try KeyFile.read(path, limit: Self.maximumFileBytes)
        } catch {
            throw .unreadableKeyFile(path, error.description)
        }
        let name = (path as NSString).lastPathComponent
        let id = name.hasSuffix(".key") ? String(name.dropLast(".key".count)) : name
        guard Self.isValid(id: id) else {
            throw .unreadableKeyFile(
                path,
                "its name must be the key's id and .key, the id made of at most \(Self.maximumIDLength) letters, "
                    + "digits, '.', '_' or '-'")
        }
        do {
            try self.init(id: id, bytes: key)
        } catch {
            throw .unreadableKeyFile(path, error.description)
        }
    }

    /// Whether `id` can be a key's id: it goes into headers, file names and logs as it is.
    static func isValid(id: String) -> Bool {
        (1...maximumIDLength).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }
}
