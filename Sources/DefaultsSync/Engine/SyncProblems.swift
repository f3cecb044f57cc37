/// What keeps keys from syncing, one message per cause, each cleared by what ends that cause; the
/// status's `lastError` is the message of the cause raised last among those still standing. One
/// state, so that ending one cause never leaves another's message shown, nor hides one that stands.
struct SyncProblems {
    enum Cause: Hashable {
        /// The store reported its connection failed or lost: until it reports a connection.
        case connection
        /// A call to the store failed while it looked connected: until a call succeeds.
        case call
        /// The store refused keys: until every refused key has been pushed.
        case refusal
        /// A local value could not be encoded, or a remote one read: until the next connection.
        case value
    }

    /// Standing causes, the one raised last at the end.
    private var standing: [(cause: Cause, message: String)] = []

    /// What the status shows: the message of the cause raised last that still stands.
    var current: String? { standing.last?.message }

    /// The message `cause` stands with, if it does.
    func message(of cause: Cause) -> String? {
        standing.last { $0.cause == cause }?.message
    }

    /// Raises `cause`, replacing its earlier message.
    mutating func raise(_ cause: Cause, _ message: String) {
        clear(cause)
        standing.append((cause, message))
    }

    mutating func clear(_ causes: Cause...) {
        standing.removeAll { causes.contains($0.cause) }
    }
}
