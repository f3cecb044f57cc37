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
    /// The server is admitting fewer connections or requests of this kind for a while (a storm of
    /// reconnections, a user at their share of the database): reconnect no sooner than the wait
    /// the reason names (``retryAfter(closeReason:)``).
    case tryAgainLater = "try again later"
    /// The user's settings are on another node of the service than the token names (they moved,
    /// or the node is draining or gone): ask the token provider for a new token, which names the
    /// user's node, and connect again; the device then sends what it holds to that node.
    case moved = "moved"

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

    /// The close frame's text asking the device to wait `wait` (whole seconds, at least one)
    /// before it connects again: `<raw value>: retry after <seconds> s; <detail>`.
    public func text(retryAfter wait: Duration, _ detail: String? = nil) -> String {
        let seconds = max(
            1, min(Self.longestRetryAfter, wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0)))
        return text("retry after \(seconds) s" + (detail.map { "; \($0)" } ?? ""))
    }

    /// The longest wait a close reason may ask for, in seconds: a longer one is read as this.
    public static let longestRetryAfter: Int64 = 3_600

    /// The wait a close frame's text asks for before connecting again (`retry after N s`, whatever
    /// the reason), at most ``longestRetryAfter`` seconds; `nil` when it names none.
    public static func retryAfter(closeReason text: String?) -> Duration? {
        guard let text, let range = text.range(of: "retry after ") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isASCII && $0.isNumber }.prefix(10)
        guard !digits.isEmpty, text[range.upperBound...].dropFirst(digits.count).hasPrefix(" s"),
            let seconds = Int64(digits)
        else { return nil }
        return .seconds(min(seconds, longestRetryAfter))
    }
}
