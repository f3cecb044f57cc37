import DefaultsSyncSQL
import Foundation

/// One node of the service: a PostgreSQL database (a cluster of its own) holding the settings of
/// the users the directory assigned to it (``NodeDirectory``). Every instance serves every node.
public struct StorageNode: Sendable, Hashable {
    /// Whether a node takes users.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// New users are assigned to it, and its users' devices are served.
        case available
        /// Its users are being moved to other nodes, one at a time (`nodes drain`); a token
        /// naming it is refused as ``DefaultsSyncProtocol/SyncCloseReason/moved``.
        case draining
        /// Lost: every instance closes its devices, and its users are assigned another node at
        /// their next token, where their devices send what they hold.
        case down
    }

    /// Its name, as tokens name it (`node`): 1 to 63 letters, digits, `.`, `_` or `-`, starting
    /// with a letter or a digit.
    public var name: String
    /// Where every instance finds its database's URL (``Reference``): the directory holds no
    /// password.
    public var reference: Reference
    /// The most users it takes.
    public var capacity: Int
    /// The users assigned to it.
    public var users: Int
    public var state: State

    public init(name: String, reference: Reference, capacity: Int, users: Int = 0, state: State = .available) {
        self.name = name
        self.reference = reference
        self.capacity = capacity
        self.users = users
        self.state = state
    }

    /// Whether `name` is a node's name.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count), isAlphanumeric(bytes[0]) else { return false }
        return bytes.allSatisfy {
            isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// How a node's database URL is found by each instance, so that no password is stored in the
    /// directory, where every instance and the operator's commands read it.
    public enum Reference: Sendable, Hashable, CustomStringConvertible {
        /// `postgres://user@host:5432/database`, with no password: for a role that needs none
        /// (a client certificate, `trust` on a private network).
        case url(String)
        /// `env:NAME`: the URL is in each instance's environment variable `NAME`.
        case environment(String)
        /// `file:/path`: the URL is the first line of a file on each instance's machine, read as
        /// a secret (a regular file only its owner can read).
        case file(String)

        /// Reads a reference as `nodes add --url` takes it. It holds no control or format
        /// character (nor a bidirectional control), so that `nodes list` prints it as it is.
        public init(_ text: String) throws(NodeDirectoryError) {
            guard
                !text.unicodeScalars.contains(where: {
                    [.control, .format].contains($0.properties.generalCategory)
                })
            else { throw NodeDirectoryError("a node's URL holds a control character") }
            if text.hasPrefix("env:") {
                let name = String(text.dropFirst(4))
                guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
                    name.utf8.allSatisfy({ StorageNode.isAlphanumeric($0) || $0 == UInt8(ascii: "_") })
                else {
                    throw NodeDirectoryError("env:\(name) does not name an environment variable (letters, digits, _)")
                }
                self = .environment(name)
            } else if text.hasPrefix("file:") {
                let path = String(text.dropFirst(5))
                guard path.hasPrefix("/"), path.utf8.count <= 4096 else {
                    throw NodeDirectoryError("file: must be followed by an absolute path")
                }
                self = .file(path)
            } else {
                let url: PostgresURL
                do {
                    url = try PostgresURL(text)
                } catch {
                    throw NodeDirectoryError("a node's URL: \(error)")
                }
                guard url.password?.isEmpty ?? true else {
                    throw NodeDirectoryError(
                        "a node's URL must hold no password (the directory is no place for one): give env:NAME or file:/path"
                    )
                }
                self = .url(text)
            }
        }

        /// As `nodes add --url` takes it and `nodes list` prints it.
        public var description: String {
            switch self {
            case .url(let url): url
            case .environment(let name): "env:\(name)"
            case .file(let path): "file:\(path)"
            }
        }

        /// The URL, read where this instance runs.
        public func resolve() throws(NodeDirectoryError) -> String {
            switch self {
            case .url(let url):
                return url
            case .environment(let name):
                guard let url = ProcessInfo.processInfo.environment[name], !url.isEmpty else {
                    throw NodeDirectoryError("the environment variable \(name) is not set")
                }
                return url
            case .file(let path):
                let data: Data
                do throws(KeyFile.Problem) {
                    data = try KeyFile.read(path, limit: 64 * 1024)
                } catch {
                    throw NodeDirectoryError("cannot read \(path): \(error)")
                }
                guard let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first,
                    !line.isEmpty
                else { throw NodeDirectoryError("\(path) is empty") }
                return String(line)
            }
        }
    }
}

/// Why the directory refused an operation; the description says what to do.
public struct NodeDirectoryError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
