public import Configuration

/// Why a ``DefaultsProvider`` could not give a value.
public enum DefaultsProviderError: Error, Hashable, CustomStringConvertible {
    /// The value stored under `key` cannot be converted to `type`, for example a string read as
    /// an integer, `2.5` read as an integer, or a date, which configuration values cannot hold.
    case valueNotConvertible(key: String, type: ConfigType)

    public var description: String {
        switch self {
        case .valueNotConvertible(let key, let type):
            "The value of \(key) in the suite cannot be read as \(type.rawValue)."
        }
    }
}
