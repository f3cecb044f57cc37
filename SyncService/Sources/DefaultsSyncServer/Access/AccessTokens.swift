import DefaultsSyncProtocol
import Foundation
import JWTKit

/// Signs and verifies the tokens devices connect with: JWTs signed with HMAC-SHA256 (HS256), whose
/// claims name one user (`sub`) and one namespace (`ns`) and expire (`exp`).
///
/// A deployment signs them in its own sign-in service with the same key (any JWT library does), or
/// with `defaults-sync-server token`.
public struct AccessTokens: Sendable {
    /// The fewest bytes a key may have: a shorter one can be guessed.
    public static let minimumKeyBytes = 32
    /// The most bytes read from a key file.
    static let maximumKeyFileBytes = 64 * 1024

    private let keys: JWTKeyCollection

    /// Uses `key`, at least ``minimumKeyBytes`` bytes.
    public init(key: some DataProtocol) async throws(AccessTokenError) {
        guard key.count >= Self.minimumKeyBytes else {
            throw .keyTooShort(key.count)
        }
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
    }

    /// Reads the key from `path`: a regular file (not a link) of ``minimumKeyBytes`` to 64 KB.
    public init(keyFile path: String) async throws(AccessTokenError) {
        let key: Data
        do {
            key = try KeyFile.read(path, limit: Self.maximumKeyFileBytes)
        } catch {
            throw .unreadableKeyFile(path, error.description)
        }
        try await self.init(key: key)
    }

    /// A token for `user`'s settings in `namespace`, valid for `lifetime`.
    public func sign(user: String, namespace: String, lifetime: Duration, now: Date = Date()) async throws -> String {
        // Whole seconds, as JWTs usually carry them.
        let expires = Date(
            timeIntervalSince1970: (now.timeIntervalSince1970 + Double(lifetime.components.seconds)).rounded(.down))
        return try await keys.sign(
            AccessTokenPayload(
                subject: SubjectClaim(value: user), namespace: namespace, expiration: ExpirationClaim(value: expires)))
    }

    /// The claims of `token` when its signature is this key's and it has not expired.
    public func verify(_ token: String) async throws(AccessTokenError) -> TokenClaims {
        let payload: AccessTokenPayload
        do {
            payload = try await keys.verify(token, as: AccessTokenPayload.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw .expired
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw .badSignature
        } catch {
            throw .malformed
        }
        guard !payload.subject.value.isEmpty, !payload.namespace.isEmpty else { throw .malformed }
        return TokenClaims(
            user: payload.subject.value, namespace: payload.namespace,
            expires: Int64(payload.expiration.value.timeIntervalSince1970.rounded(.down)))
    }
}

/// Why a token or a key was refused; the description is what a device is told.
public enum AccessTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing
    case malformed
    case badSignature
    case expired
    case keyTooShort(Int)
    case unreadableKeyFile(String, String)

    public var description: String {
        switch self {
        case .missing: "no token: connect with the header Authorization: Bearer <token>"
        case .malformed: "the token is not a JWT naming a user (sub), a namespace (ns) and an expiry (exp)"
        case .badSignature: "the token's signature is not this server's"
        case .expired: "the token has expired"
        case .keyTooShort(let count):
            "the token key has \(count) bytes; it needs at least \(AccessTokens.minimumKeyBytes) random bytes"
        case .unreadableKeyFile(let path, let reason): "cannot read the token key file \(path): \(reason)"
        }
    }
}

/// The JWT payload of an access token.
struct AccessTokenPayload: JWTPayload {
    var subject: SubjectClaim
    var namespace: String
    var expiration: ExpirationClaim

    enum CodingKeys: String, CodingKey {
        case subject = "sub"
        case namespace = "ns"
        case expiration = "exp"
    }

    func verify(using algorithm: some JWTAlgorithm) throws {
        try expiration.verifyNotExpired()
    }
}
