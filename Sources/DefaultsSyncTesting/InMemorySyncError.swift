/// Why an ``InMemorySyncStore`` call failed.
public enum InMemorySyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store is not connected: ``InMemorySyncStore/disconnect()`` was called, or it is not
    /// running.
    case notConnected(store: String)
    /// A failure the test asked for (``InMemorySyncStore/failNextPushes(_:with:)``,
    /// ``InMemorySyncStore/failNextFetches(_:with:)``).
    case injected(String)

    public var description: String {
        switch self {
        case .notConnected(let store): "\(store) is not connected"
        case .injected(let what): what
        }
    }
}
