import DefaultsSyncProtocol
import Foundation

/// What a server asks of a token's claims beyond its signature, as a hosted service does.
///
/// - `exp`, `nbf` and `iat` are judged with ``leeway`` for the clocks of the sign-in service and the
///   server: a token is refused from `exp + leeway` on, before `nbf - leeway`, and when issued
///   after `now + leeway`. A connection whose token stops being accepted is closed then.
/// - With ``maximumLifetime``, a token must say when it was issued (`iat`) and may live at most
///   that long (`exp - iat`), so that a leaked token is of use for a bounded time.
/// - With an ``issuer`` or an ``audience``, a token must name that issuer (`iss`) or list that
///   audience (`aud`): tokens the same key signed for another service are refused. Without, those
///   claims are not looked at.
public struct TokenPolicy: Sendable, Hashable {
    /// The clocks' allowance on every time claim (60 s).
    public var leeway: Duration = .seconds(60)
    /// The longest a token may be valid, from `iat` to `exp` (30 days); `nil` for no limit.
    public var maximumLifetime: Duration? = .seconds(30 * 86_400)
    /// The `iss` every token must carry, when set.
    public var issuer: String?
    /// The value `aud` must hold (or list), when set.
    public var audience: String?

    public init() {}

    /// The time, in seconds since 1970, from which a token with `claims` is refused: `exp` plus
    /// the leeway.
    public func refusedFrom(_ claims: TokenClaims) -> Int64 {
        claims.expires + leewaySeconds
    }

    /// The leeway in whole seconds, within what no claim's arithmetic can overflow.
    private var leewaySeconds: Int64 { min(max(0, leeway.components.seconds), TokenClaims.latestTime) }

    /// Why `claims` are refused at `now` (seconds since 1970), or `nil` when they are accepted.
    func problem(with claims: TokenClaims, now: Int64) -> AccessTokenError? {
        let leeway = leewaySeconds
        if now >= refusedFrom(claims) { return .expired }
        if let notBefore = claims.notBefore, now < notBefore - leeway { return .notYetValid }
        if let issuedAt = claims.issuedAt, issuedAt - leeway > now { return .issuedInTheFuture }
        if let maximumLifetime {
            guard let issuedAt = claims.issuedAt else { return .lifetimeUnknown }
            if claims.expires - issuedAt > maximumLifetime.components.seconds {
                return .lifetimeTooLong(maximum: maximumLifetime.components.seconds)
            }
        }
        if let issuer, claims.issuer != issuer { return .wrongIssuer(expected: issuer) }
        if let audience, !claims.audience.contains(audience) { return .wrongAudience(expected: audience) }
        return nil
    }
}
