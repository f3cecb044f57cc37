import Crypto
import DefaultsSyncProtocol
import Foundation
import JWTKit

/// Signs and verifies the tokens devices connect with: JWTs signed with HMAC-SHA256 (HS256), whose
/// claims name one user (`sub`) and one namespace (`ns`) and expire (`exp`), judged by a
/// ``TokenPolicy`` (leeway, lifetime, issuer, audience).
///
/// Several keys may verify at once, each named by its id (``AccessTokenKey``): a token's header
/// names its key (`kid`), and only that key verifies it; a token that names no key is verified with
/// the first one (the key of a deployment from before rotation). A deployment signs tokens in its
/// own sign-in service with one of the keys (any JWT library does), or with
/// `defaults-sync-server token`.
public struct AccessTokens: Sendable {
    /// The fewest bytes a key may have: a shorter one can be guessed.
    public static let minimumKeyBytes = AccessTokenKey.minimumBytes

    /// What a token's claims must satisfy.
    public let policy: TokenPolicy
    /// The ids of the keys, the first one also verifying tokens that name none.
    public let keyIDs: [String]

    private let signingKeys: [String: SymmetricKey]
    /// The same keys for jwt-kit, which verifies the signatures.
    private let verifiers: JWTKeyCollection

    /// Verifies with `keys` (at least one, each id once) under `policy`.
    public init(keys: [AccessTokenKey], policy: TokenPolicy = TokenPolicy()) async throws(AccessTokenError) {
        guard let first = keys.first else { throw .noKey }
        var signingKeys: [String: SymmetricKey] = [:]
        for key in keys {
            guard signingKeys.updateValue(SymmetricKey(data: key.bytes), forKey: key.id) == nil else {
                throw .duplicateKeyID(key.id)
            }
        }
        let verifiers = JWTKeyCollection()
        // The first key added is also jwt-kit's default, which verifies a token naming no key.
        await verifiers.add(
            hmac: HMACKey(from: first.bytes), digestAlgorithm: .sha256, kid: JWKIdentifier(string: first.id))
        for key in keys.dropFirst() {
            await verifiers.add(
                hmac: HMACKey(from: key.bytes), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.id))
        }
        self.policy = policy
        self.keyIDs = keys.map(\.id)
        self.signingKeys = signingKeys
        self.verifiers = verifiers
    }

    /// Uses `key`, at least ``minimumKeyBytes`` bytes, named `id`.
    public init(key: some DataProtocol, id: String = "default", policy: TokenPolicy = TokenPolicy())
        async throws(AccessTokenError)
    {
        try await self.init(keys: [AccessTokenKey(id: id, bytes: key)], policy: policy)
    }

    /// Reads the keys from `paths` (see ``AccessTokenKey/init(file:)``), the first also verifying
    /// tokens that name no key.
    public init(keyFiles paths: [String], policy: TokenPolicy = TokenPolicy()) async throws(AccessTokenError) {
        var keys: [AccessTokenKey] = []
        for path in paths {
            keys.append(try AccessTokenKey(file: path))
        }
        try await self.init(keys: keys, policy: policy)
    }

    /// Reads the key from `path` (see ``AccessTokenKey/init(file:)``).
    public init(keyFile path: String, policy: TokenPolicy = TokenPolicy()) async throws(AccessTokenError) {
        try await self.init(keyFiles: [path], policy: policy)
    }

    /// A token for `user`'s settings in `namespace`, issued at `now` and valid for `lifetime`,
    /// signed with the key `keyID` (the first key when `nil`), naming `issuer`, `audience` and the
    /// user's `node` (``NodeDirectory/assign(user:)``) when given.
    public func sign(
        user: String, namespace: String, lifetime: Duration, now: Date = Date(), keyID: String? = nil,
        issuer: String? = nil, audience: String? = nil, node: String? = nil
    ) async throws(AccessTokenError) -> String {
        // Whole seconds, as JWTs usually carry them; no lifetime can overflow the sum.
        let latest = TokenClaims.latestTime
        let issued = Self.seconds(now)
        let expires = min(max(0, issued + min(max(-latest, lifetime.components.seconds), latest)), latest)
        let claims = TokenClaims(
            user: user, namespace: namespace, expires: expires, issuedAt: issued,
            issuer: issuer, audience: audience.map { [$0] } ?? [], node: node)
        let payload: Data
        do {
            payload = try JSONEncoder().encode(claims)
            // What a server would refuse is not signed: the same reading judges both.
            _ = try JSONDecoder().decode(TokenClaims.self, from: payload)
        } catch {
            throw .malformed("\(error)")
        }
        return try sign(payload: payload, keyID: keyID)
    }

    /// A token whose payload is `payload`, byte for byte, signed with the key `keyID` (the first
    /// when `nil`): the one place tokens are signed. By hand, so that tests can sign what a careless
    /// or hostile issuer would (an `exp` of 1e19); jwt-kit, which verifies, is a second reading.
    func sign(payload: Data, keyID: String? = nil) throws(AccessTokenError) -> String {
        let id = keyID ?? keyIDs[0]
        guard let key = signingKeys[id] else { throw .unknownKey(id) }
        let header = #"{"alg":"HS256","typ":"JWT","kid":"\#(id)"}"#
        let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(payload)
        let signature = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)
        return input + "." + Self.base64URL(Data(signature))
    }

    /// The claims of `token` when one of these keys signed it (the one its `kid` names) and the
    /// policy accepts its claims at `now`.
    public func verify(_ token: String, now: Date = Date()) async throws(AccessTokenError) -> TokenClaims {
        guard let header = TokenHeader(unverifiedToken: token) else {
            throw .malformed("it is not a compact JWT (header.payload.signature in base64url)")
        }
        guard header.algorithm == "HS256" else { throw .badSignature }
        if let id = header.keyID, signingKeys[id] == nil {
            // jwt-kit would try its default key instead: a removed key's tokens must fail as such.
            throw .unknownKey(id)
        }
        do {
            _ = try await verifiers.verify(token, as: SignedPayload.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw .badSignature
        } catch {
            throw .malformed("it is not a compact JWT (header.payload.signature in base64url)")
        }
        // Signed by us: now the claims, through the one reading of them the devices share.
        let claims: TokenClaims
        do throws(TokenClaims.Problem) {
            claims = try TokenClaims(unverifiedPayloadOf: token)
        } catch {
            throw .malformed(error.description)
        }
        if let problem = policy.problem(with: claims, now: Self.seconds(now)) {
            throw problem
        }
        return claims
    }

    /// Whole seconds since 1970 of `date`, within the times a claim can hold.
    private static func seconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return seconds.isFinite ? Int64(min(max(seconds, 0), Double(TokenClaims.latestTime))) : 0
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Why a token or a key was refused; the description is what a device is told.
public enum AccessTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing
    /// Not a JWT, or a claim refused (the text says which).
    case malformed(String)
    case badSignature
    /// The token names a key (`kid`) this server does not have (never had, or no longer has).
    case unknownKey(String)
    case expired
    /// `nbf` is still ahead, beyond the leeway.
    case notYetValid
    /// `iat` is ahead, beyond the leeway.
    case issuedInTheFuture
    /// The server limits a token's lifetime, and the token does not say when it was issued.
    case lifetimeUnknown
    /// `exp - iat` is over the server's maximum, in seconds.
    case lifetimeTooLong(maximum: Int64)
    case wrongIssuer(expected: String)
    case wrongAudience(expected: String)
    case noKey
    case duplicateKeyID(String)
    case invalidKeyID(String)
    case keyTooShort(Int)
    case unreadableKeyFile(String, String)

    public var description: String {
        switch self {
        case .missing: "no token: connect with the header Authorization: Bearer <token>"
        case .malformed(let reason):
            "the token is not a JWT naming a user (sub), a namespace (ns) and an expiry (exp): \(reason)"
        case .badSignature: "the token's signature is not this server's"
        case .unknownKey(let id): "the token's key (kid \(id)) is not one of this server's"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet (nbf)"
        case .issuedInTheFuture: "the token was issued in the future (iat)"
        case .lifetimeUnknown: "the token does not say when it was issued (iat), and this server limits its lifetime"
        case .lifetimeTooLong(let maximum): "the token lives longer than this server allows (\(maximum) s from iat)"
        case .wrongIssuer(let expected): "the token was not issued by \(expected) (iss)"
        case .wrongAudience(let expected): "the token is not meant for \(expected) (aud)"
        case .noKey: "no token key given"
        case .duplicateKeyID(let id): "two token keys have the id \(id)"
        case .invalidKeyID(let id):
            "the token key id \"\(id)\" is not 1 to \(AccessTokenKey.maximumIDLength) letters, digits, '.', '_' or '-'"
        case .keyTooShort(let count):
            "the token key has \(count) bytes; it needs at least \(AccessTokens.minimumKeyBytes) random bytes"
        case .unreadableKeyFile(let path, let reason): "cannot read the token key file \(path): \(reason)"
        }
    }
}

/// A payload jwt-kit only checks the signature of: the claims are read by ``TokenClaims`` after.
private struct SignedPayload: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) throws {}
}
