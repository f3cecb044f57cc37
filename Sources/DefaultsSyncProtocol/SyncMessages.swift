import Foundation

/// The sync service's protocol: JSON messages in WebSocket text frames at ``path``.
///
/// A device opens the WebSocket with `Authorization: Bearer <token>`; the token names the one
/// user and namespace the connection reads and writes. The server answers with a
/// ``ServerMessage/Kind/welcome``, then answers each ``DeviceMessage`` with a
/// ``ServerMessage/Kind/reply`` (or a ``ServerMessage/Kind/failure``) carrying its `id`, and sends
/// ``ServerMessage/Kind/changed`` whenever another device of the user changes records.
///
/// Records carry the server's sequence number (`seq`): a namespace's numbers follow the order its
/// changes commit in, so a device that saw number `n` has seen every change up to `n`, and after a
/// reconnection asks only for the changes after it.
public enum SyncProtocol {
    /// The WebSocket's path on the server.
    public static let path = "/v1/sync"

    /// The close code for a refused or expired token (1008, policy violation).
    public static let unauthorizedCloseCode = 1008

    /// The most records one push carries, and the most keys one `records` request names: the
    /// server refuses more (each is work in one transaction holding the owner's lock), and the
    /// client sends its batches within it.
    public static let maximumRecordsPerMessage = 1_000

    /// Encodes a message as the JSON text of one frame.
    public static func encode(_ message: some Encodable) throws -> String {
        String(decoding: try encoder.encode(message), as: UTF8.self)
    }

    /// Decodes one frame's text.
    public static func decode<Message: Decodable>(_ type: Message.Type, from text: String) throws -> Message {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}

/// One record as the service stores it: a key's name, its encoded value (none when removed) and
/// its version, with the server's sequence number when it comes from the server.
public struct WireRecord: Codable, Sendable, Hashable {
    public var key: String
    /// The value's bytes (base64 in JSON), `nil` for a removed key.
    public var value: Data?
    public var wall: Int64
    public var counter: Int64
    public var origin: String
    /// The server's number for this change; `nil` in what a device pushes.
    public var seq: Int64?

    public init(key: String, value: Data?, wall: Int64, counter: Int64, origin: String, seq: Int64? = nil) {
        self.key = key
        self.value = value
        self.wall = wall
        self.counter = counter
        self.origin = origin
        self.seq = seq
    }
}

/// A key's version without its value, for the first catch-up.
public struct WireStamp: Codable, Sendable, Hashable {
    public var key: String
    public var wall: Int64
    public var counter: Int64
    public var origin: String

    public init(key: String, wall: Int64, counter: Int64, origin: String) {
        self.key = key
        self.wall = wall
        self.counter = counter
        self.origin = origin
    }
}

/// What a device asks; the server answers each with a message carrying the same ``id``.
public struct DeviceMessage: Codable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// Every key's version: answered with ``ServerMessage/stamps``. A device that sends
        /// ``DeviceMessage/limit`` gets them a page at a time, in key order, after
        /// ``DeviceMessage/afterKey``, with ``ServerMessage/more`` when more follow; one that sends
        /// neither (a device older than paging) gets them all at once.
        case stamps
        /// The records of ``DeviceMessage/keys``: answered with ``ServerMessage/records``.
        case records
        /// The changes numbered after ``DeviceMessage/after``, in order, at most a page: answered
        /// with ``ServerMessage/records``, ``ServerMessage/latest`` and ``ServerMessage/more``.
        case changes
        /// Stores ``DeviceMessage/records`` unless the server holds later versions: answered once
        /// they are durable, with ``ServerMessage/refused`` naming those it will never take.
        case push
    }

    public var id: Int
    public var kind: Kind
    public var keys: [String]?
    public var after: Int64?
    public var records: [WireRecord]?
    /// A `stamps` page starts after this key (in the byte order of UTF-8); none: at the first.
    public var afterKey: String?
    /// The most stamps a `stamps` page holds (the server may hold fewer).
    public var limit: Int?

    public init(
        id: Int, kind: Kind, keys: [String]? = nil, after: Int64? = nil, records: [WireRecord]? = nil,
        afterKey: String? = nil, limit: Int? = nil
    ) {
        self.id = id
        self.kind = kind
        self.keys = keys
        self.after = after
        self.records = records
        self.afterKey = afterKey
        self.limit = limit
    }
}

/// What the server sends.
public struct ServerMessage: Codable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// The first message of a connection: the namespace's latest number, the limits and, in a
        /// deployment of several nodes, the node that serves the user (``ServerMessage/node``).
        case welcome
        /// The answer to the device message with the same ``ServerMessage/id``.
        case reply
        /// The device message with the same ``ServerMessage/id`` failed: ``ServerMessage/error``.
        case failure
        /// Other devices changed ``ServerMessage/records``.
        case changed
    }

    public var kind: Kind
    public var id: Int?
    public var latest: Int64?
    public var limits: ServiceLimits?
    public var stamps: [WireStamp]?
    public var records: [WireRecord]?
    /// Keys the server stored none of and never will as they are, with why (a quota, a limit).
    public var refused: [String: String]?
    /// More follow the page of a ``DeviceMessage/Kind/changes`` or a paged
    /// ``DeviceMessage/Kind/stamps`` reply.
    public var more: Bool?
    public var error: ServiceFailure?
    /// In a ``Kind/welcome``: the node of the service that holds the user's settings, when the
    /// deployment has several. Its numbers (`seq`) are its own: a device whose welcome names
    /// another node than the one it last synced with catches up in full, and sends what it holds.
    public var node: String?

    public init(
        kind: Kind, id: Int? = nil, latest: Int64? = nil, limits: ServiceLimits? = nil, stamps: [WireStamp]? = nil,
        records: [WireRecord]? = nil, refused: [String: String]? = nil, more: Bool? = nil,
        error: ServiceFailure? = nil, node: String? = nil
    ) {
        self.kind = kind
        self.id = id
        self.latest = latest
        self.limits = limits
        self.stamps = stamps
        self.records = records
        self.refused = refused
        self.more = more
        self.error = error
        self.node = node
    }
}

/// Why the server did not answer a message.
public struct ServiceFailure: Codable, Sendable, Hashable, Error, CustomStringConvertible {
    public enum Code: String, Codable, Sendable {
        /// Too many messages: wait ``ServiceFailure/retryAfterMilliseconds``.
        case rateLimited
        /// The message is not one the server understands.
        case malformed
        /// The database did not answer; try again.
        case unavailable
    }

    public var code: Code
    public var message: String
    public var retryAfterMilliseconds: Int?

    public init(_ code: Code, _ message: String, retryAfterMilliseconds: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
