import Foundation

/// What a token says: whose settings (``user``), which namespace, from when until when, and, when
/// the deployment uses them, who issued it (``issuer``), for which service (``audience``) and on
/// which of its nodes the user's settings are (``node``).
///
/// The server verifies the token's signature and its times; a device reads the claims only to know
/// its user and namespace (for the end-to-end encryption salt and for descriptions), never
/// trusting them. Both read them through ``init(unverifiedPayloadOf:)``, so that a claim one of
/// them refuses the other refuses too:
///
/// - `sub` and `ns` are non-empty strings of at most ``maximumNameBytes`` bytes of UTF-8 without a
///   control character (nor U+2028 or U+2029, which end lines too): a user's name is part of how
///   the server names and logs an owner, and a newline in it would split a log line or make two
///   owners one.
/// - `exp`, `nbf` and `iat` are JSON numbers of seconds since 1970 (a fraction is dropped) up to
///   ``latestTime``, the end of the year 9999; any other number is refused, never converted with a
///   trap.
/// - `iss` is a string and `aud` a string or an array of strings.
/// - `node`, when present, is a name as `sub` is.
public struct TokenClaims: Codable, Sendable, Hashable {
    /// The user (JWT `sub`).
    public var user: String
    /// The namespace (`ns`), for example the app's identifier.
    public var namespace: String
    /// Seconds since 1970 after which the token is refused (JWT `exp`).
    public var expires: Int64
    /// Seconds since 1970 before which the token is refused (JWT `nbf`), when it says.
    public var notBefore: Int64?
    /// Seconds since 1970 when the token was issued (JWT `iat`), when it says.
    public var issuedAt: Int64?
    /// Who issued the token (JWT `iss`), when it says.
    public var issuer: String?
    /// The services the token is meant for (JWT `aud`); empty when it names none.
    public var audience: [String]
    /// The node of the service that holds the user's settings (`node`), as the deployment's
    /// directory of nodes assigned it; `nil` in a deployment of one database.
    public var node: String?

    /// The most bytes of UTF-8 in `sub` or `ns`.
    public static let maximumNameBytes = 255
    /// The latest time a claim may hold: 9999-12-31T23:59:59Z.
    public static let latestTime: Int64 = 253_402_300_799

    /// Why a token's claims were refused; the description names the claim.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    enum CodingKeys: String, CodingKey {
        case user = "sub"
        case namespace = "ns"
        case expires = "exp"
        case notBefore = "nbf"
        case issuedAt = "iat"
        case issuer = "iss"
        case audience = "aud"
        case node
    }

    public init(
        user: String, namespace: String, expires: Int64, notBefore: Int64? = nil, issuedAt: Int64? = nil,
        issuer: String? = nil, audience: [String] = [], node: String? = nil
    ) {
        self.user = user
        self.namespace = namespace
        self.expires = expires
        self.notBefore = notBefore
        self.issuedAt = issuedAt
        self.issuer = issuer
        self.audience = audience
        self.node = node
    }

    /// Decodes the claims, throwing a ``Problem`` that names the first claim refused.
    public init(from decoder: any Decoder) throws {
        let container: KeyedDecodingContainer<CodingKeys>
        do {
            container = try decoder.container(keyedBy: CodingKeys.self)
        } catch {
            throw Problem("the claims are not a JSON object")
        }
        user = try Self.name(.user, in: container)
        namespace = try Self.name(.namespace, in: container)
        guard let expires = try Self.time(.expires, in: container) else { throw Problem("exp is missing") }
        self.expires = expires
        notBefore = try Self.time(.notBefore, in: container)
        issuedAt = try Self.time(.issuedAt, in: container)
        if container.contains(.issuer) {
            guard let issuer = try? container.decode(String.self, forKey: .issuer) else {
                throw Problem("iss is not a string")
            }
            self.issuer = issuer
        }
        if !container.contains(.audience) {
            audience = []
        } else if let one = try? container.decode(String.self, forKey: .audience) {
            audience = [one]
        } else if let several = try? container.decode([String].self, forKey: .audience) {
            audience = several
        } else {
            throw Problem("aud is not a string or an array of strings")
        }
        node = container.contains(.node) ? try Self.name(.node, in: container) : nil
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(user, forKey: .user)
        try container.encode(namespace, forKey: .namespace)
        try container.encode(expires, forKey: .expires)
        try container.encodeIfPresent(notBefore, forKey: .notBefore)
        try container.encodeIfPresent(issuedAt, forKey: .issuedAt)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        if audience.count == 1 {
            try container.encode(audience[0], forKey: .audience)
        } else if !audience.isEmpty {
            try container.encode(audience, forKey: .audience)
        }
        try container.encodeIfPresent(node, forKey: .node)
    }

    /// The claims of a compact JWT (`header.payload.signature`), unverified.
    ///
    /// - Throws: ``Problem`` when the token is not a JWT or a claim is refused.
    public init(unverifiedPayloadOf token: String) throws(Problem) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Self.base64URLDecoded(parts[1]) else {
            throw Problem("it is not a compact JWT (header.payload.signature in base64url)")
        }
        do {
            self = try JSONDecoder().decode(Self.self, from: payload)
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem("its payload is not JSON")
        }
    }

    /// The claims of a compact JWT (`header.payload.signature`), unverified; `nil` when it is not
    /// one or a claim is refused (``init(unverifiedPayloadOf:)`` says why).
    public init?(unverifiedToken token: String) {
        guard let claims = try? Self(unverifiedPayloadOf: token) else { return nil }
        self = claims
    }

    /// The bytes of one base64url part of a JWT (no padding), or `nil`.
    static func base64URLDecoded(_ part: Substring) -> Data? {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// `sub`, `ns` or `node`: a name that is safe in an owner's name and in a log line.
    private static func name(_ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>) throws -> String {
        guard let name = try? container.decode(String.self, forKey: key) else {
            throw Problem("\(key.rawValue) is missing or not a string")
        }
        guard !name.isEmpty else { throw Problem("\(key.rawValue) is empty") }
        guard name.utf8.count <= maximumNameBytes else {
            throw Problem("\(key.rawValue) is longer than \(maximumNameBytes) bytes")
        }
        guard !name.unicodeScalars.contains(where: isLineBreaking) else {
            throw Problem("\(key.rawValue) holds a control character")
        }
        return name
    }

    /// Whether `scalar` is a control character, or a separator that ends a line as one does.
    private static func isLineBreaking(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// A NumericDate claim in whole seconds, `nil` when absent; a number out of range is refused
    /// here, before anything converts it.
    private static func time(_ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>) throws -> Int64? {
        guard container.contains(key) else { return nil }
        guard let seconds = try? container.decode(Double.self, forKey: key) else {
            throw Problem("\(key.rawValue) is not a number")
        }
        guard seconds.isFinite, seconds >= 0, seconds <= Double(latestTime) else {
            throw Problem("\(key.rawValue) is not a time between 1970 and 9999")
        }
        return Int64(seconds.rounded(.down))
    }
}

/// What a token's header says, unverified: the algorithm and the key's id (`kid`), by which a
/// server with several keys (rotation) picks the one to verify with.
public struct TokenHeader: Decodable, Sendable, Hashable {
    /// The signature's algorithm (JWT `alg`), for example `HS256`.
    public var algorithm: String
    /// The id of the key that signed the token (JWT `kid`), when it says.
    public var keyID: String?

    enum CodingKeys: String, CodingKey {
        case algorithm = "alg"
        case keyID = "kid"
    }

    /// The header of a compact JWT, unverified; `nil` when it is not one.
    public init?(unverifiedToken token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = TokenClaims.base64URLDecoded(parts[0]),
            let decoded = try? JSONDecoder().decode(Self.self, from: header)
        else { return nil }
        self = decoded
    }
}
