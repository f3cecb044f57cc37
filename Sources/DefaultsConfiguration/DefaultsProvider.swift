public import Configuration
public import Defaults
import Synchronization

/// A swift-configuration provider that reads the values stored in a suite, so that a
/// `ConfigReader` can put the user's settings in its provider stack.
///
/// ```swift
/// let config = ConfigReader(providers: [
///     EnvironmentVariablesProvider(),
///     DefaultsProvider(suite: FileSuite(name: "com.example.app")),
/// ])
/// let timeout = config.int(forKey: "http.timeout", default: 30)
/// ```
///
/// - **Keys**: a dotted config key reads nested dictionaries: `http.timeout` is the value of
///   `timeout` inside the dictionary stored under `http`. A stored key that itself contains dots
///   (`http.timeout` at the top level) is found too, when no nested value answers.
/// - **Values** are the suite's persistent values: what the user (or a program, or the `defaults`
///   command) stored; for a `FileSuite`, layered between the administrator's vendor defaults
///   (below) and managed values (above). Registered defaults, the defaults declared in code, are
///   left to the reader's `default:` arguments, and launch arguments to swift-configuration's own
///   command-line provider, so that neither shadows a provider below this one.
/// - **Conversions** follow swift-configuration's property-list file provider; see
///   ``DefaultsConfigSnapshot``.
/// - **Snapshots** capture the suite's values at one moment; **watching** follows the suite's
///   change stream, `SuiteChangeCenter`, so changes made by this process and, for a
///   `FileSuite`, by any other process reach `watch` callers.
public final class DefaultsProvider: Sendable {
    /// The suite whose values this provider reads.
    public let suite: any DefaultsSuite

    /// Decides which values are secrets, by dotted key and value, as swift-configuration's file
    /// providers do; the value passed is the stored one as `String`, `Int`, `Double`, `Bool`,
    /// `[UInt8]` or an array of these.
    public let secretsSpecifier: SecretsSpecifier<String, any Sendable>

    /// Creates a provider over `suite`.
    ///
    /// - Parameters:
    ///   - suite: Any suite, for example `FileSuite(name: "com.example.app")`.
    ///   - secretsSpecifier: Which values are secrets, kept out of access logs; none by default.
    public init(suite: any DefaultsSuite, secretsSpecifier: SecretsSpecifier<String, any Sendable> = .none) {
        self.suite = suite
        self.secretsSpecifier = secretsSpecifier
    }
}

extension DefaultsProvider: ConfigProvider {
    /// `DefaultsProvider[<suite name>]`, as access reports and logs show it.
    public var providerName: String {
        "DefaultsProvider[\(suite.name)]"
    }

    /// The value of `key` as the suite holds it now, converted to `type`.
    ///
    /// - Throws: ``DefaultsProviderError`` when the stored value cannot be converted to `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try currentSnapshot().value(forKey: key, type: type)
    }

    /// The same as ``value(forKey:type:)``: a suite's values are always at hand.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    /// The suite's values now, as an immutable snapshot.
    public func snapshot() -> any ConfigSnapshot {
        currentSnapshot()
    }

    /// Emits the value of `key` now, then each time a change of the suite alters it.
    public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: (
            _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
        ) async throws -> Return
    ) async throws -> Return {
        let lookups = Lookups(key: key, type: type)
        return try await watchSnapshots { snapshot in
            lookups.next(in: snapshot)
        } handler: { updates in
            try await updatesHandler(ConfigUpdatesAsyncSequence(updates))
        }
    }

    /// Emits a snapshot now, then a new one after each change of the suite.
    public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        try await watchSnapshots { snapshot in
            snapshot as any ConfigSnapshot
        } handler: { updates in
            try await updatesHandler(ConfigUpdatesAsyncSequence(updates))
        }
    }
}

extension DefaultsProvider {
    func currentSnapshot() -> DefaultsConfigSnapshot {
        DefaultsConfigSnapshot(
            layers: suite.storedValueLayers(),
            providerName: providerName,
            secretsSpecifier: secretsSpecifier
        )
    }

    /// Observes the suite for the duration of `handler`, feeding it an element made by `element`
    /// from a snapshot taken now and after each change; `nil` elements are skipped.
    ///
    /// Only the newest element is buffered: a slow consumer sees the latest state, not every step.
    private func watchSnapshots<Element: Sendable, Return: ~Copyable>(
        _ element: @escaping @Sendable (DefaultsConfigSnapshot) -> Element?,
        handler: (AsyncStream<Element>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The observer is registered before the first snapshot is taken, so no change can fall
        // between the two.
        let token = suite.changes.addObserver { [self] _ in
            if let next = element(currentSnapshot()) {
                continuation.yield(next)
            }
        }
        defer {
            suite.changes.removeObserver(token)
            continuation.finish()
        }
        if let first = element(currentSnapshot()) {
            continuation.yield(first)
        }
        return try await handler(stream)
    }
}

/// The successive lookups of one key, each emitted only when it differs from the one before.
private final class Lookups: Sendable {
    let key: AbsoluteConfigKey
    let type: ConfigType
    /// The last result emitted.
    private let last = Mutex<Result<LookupResult, DefaultsProviderError>?>(nil)

    init(key: AbsoluteConfigKey, type: ConfigType) {
        self.key = key
        self.type = type
    }

    func next(in snapshot: DefaultsConfigSnapshot) -> Result<LookupResult, any Error>? {
        let result: Result<LookupResult, DefaultsProviderError> = Result { () throws(DefaultsProviderError) in
            try snapshot.lookup(key, type: type)
        }
        return last.withLock { last in
            guard last != result else { return nil }
            last = result
            return result.mapError { $0 as any Error }
        }
    }
}
