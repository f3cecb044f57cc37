/// Why the server closes a device's connection, as the reason of its close frame: a device tells
/// them apart by ``SyncCloseReason/init(closeReason:)`` and reacts to each (a new token, a pause).
///
/// The reason's text starts with the case's raw value; what follows is for people and logs.
public enum SyncCloseReason: String, Sendable, CaseIterable {
    /// The token expired while the connection was open: ask the token provider for a new one.
    case tokenExpired = "token expired"
    /// The user's tokens issued before some time were revoked: ask for a new one.
    case tokenRevoked = "token revoked"
    /// The device read too slowly and the server's bounded buffer for it filled up.
    case slowConsumer = "slow consumer"
    /// The user already holds as many connections as the server allows.
    case tooManyConnections = "too many connections"

    /// The reason a close frame's text names, when it names one of these.
    public init?(closeReason text: String?) {
        guard let text, let reason = Self.allCases.first(where: { text.hasPrefix($0.rawValue) }) else {
            return nil
        }
        self = reason
    }

    /// The close frame's text: the raw value, then `detail` for people.
    public func text(_ detail: String? = nil) -> String {
        detail.map { "\(rawValue): \($0)" } ?? rawValue
    }
}
