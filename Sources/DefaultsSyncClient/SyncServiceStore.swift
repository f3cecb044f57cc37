import Defaults
import DefaultsSyncEncryption
import DefaultsSyncProtocol
import Foundation
import NIOSSL

/// A `DefaultsSyncStore` that syncs through `defaults-sync-server`: each user's `iCloud` keys
/// follow them across their machines, and the app holds no database credentials.
///
/// ```swift
/// import Defaults
/// import DefaultsSyncClient
///
/// Defaults.iCloud.use(try SyncServiceStore(url: "wss://sync.example.com", token: token))
/// ```
///
/// - The token (from your sign-in service, or `defaults-sync-server token`) names the user and the
///   namespace; the server reads and writes nothing else for this device. Give a token provider
///   and the store renews tokens as they expire.
/// - Reconnects with back-off and jitter; after each reconnection fetches only the changes the
///   server numbered after the last one this device saw. Pushes and fetches in batches.
/// - With a `passphrase`, values are sealed and key names hashed on the device
///   (`EncryptedSyncStore`): neither reaches the server nor its database in clear.
public final class SyncServiceStore: DefaultsSyncStore {
    /// The server and the token's user and namespace; never the token.
    public let description: String
    /// The user the token names.
    public let user: String
    /// The namespace the token names.
    public let namespace: String

    private let store: any DefaultsSyncStore

    /// How a ``SyncServiceStore`` connects.
    public struct Options: Sendable {
        /// The first and the longest wait before reconnecting; each failed attempt doubles it.
        public var reconnectDelays: ClosedRange<Duration> = .milliseconds(250)...(.seconds(30))
        /// How long the server may take to answer one call before the connection is made again,
        /// and to accept a new connection (its TLS handshake and WebSocket upgrade included).
        public var responseTimeout: Duration = .seconds(30)
        /// How often the connection pings the server; one that does not answer is made again.
        public var pingInterval: Duration = .seconds(30)
        /// TLS settings for `wss://` (the system's trust roots when `nil`).
        public var tlsConfiguration: TLSConfiguration?

        public init() {}
    }

    /// Fetches a token for the store's user and namespace, fresh from the app's sign-in service.
    public typealias TokenProvider = @Sendable () async throws -> String

    /// Connects to the service at `url` with `token`; with a `passphrase`, end to end encrypted.
    ///
    /// Nothing connects until the store is given to `Defaults.iCloud.use(_:)`. Once the token
    /// expires the device stops syncing: to renew tokens, give a token provider instead
    /// (``init(url:user:namespace:passphrase:options:tokenProvider:)``).
    ///
    /// - Parameters:
    ///   - url: `wss://host[:port]` (TLS) or `ws://host:port` (a server on loopback or a private
    ///     network).
    ///   - token: A token the server's key signed, naming the user and the namespace.
    ///   - passphrase: The secret every machine of the user shares, for end-to-end encryption;
    ///     never sent anywhere.
    ///   - options: Reconnection, timeouts and TLS.
    /// - Throws: ``SyncServiceError`` for a URL or token that cannot be used, `EndToEndError` for an
    ///   empty passphrase.
    public convenience init(url: String, token: String, passphrase: String? = nil, options: Options = Options()) throws
    {
        guard let claims = TokenClaims(unverifiedToken: token) else { throw SyncServiceError.invalidToken }
        try self.init(
            url: url, user: claims.user, namespace: claims.namespace, passphrase: passphrase, options: options,
            tokenProvider: { token })
    }

    /// Connects to the service at `url` as `user` in `namespace`, with the tokens `tokenProvider`
    /// fetches; with a `passphrase`, end to end encrypted.
    ///
    /// The store asks the provider for a token before each connection, and again at once when
    /// the server closes the connection because the token expired or was revoked, or refuses it
    /// (waiting longer each time the next one is refused too). Tokens short-lived enough that a
    /// leaked one soon stops working thus cost the app only a call now and then:
    ///
    /// ```swift
    /// let store = try SyncServiceStore(
    ///     url: "wss://sync.example.com", user: account.id, namespace: "com.example.app"
    /// ) {
    ///     try await account.freshSyncToken()  // from your sign-in service
    /// }
    /// ```
    ///
    /// Nothing connects until the store is given to `Defaults.iCloud.use(_:)`.
    ///
    /// - Parameters:
    ///   - url: `wss://host[:port]` (TLS) or `ws://host:port` (a server on loopback or a private
    ///     network).
    ///   - user: The user every token names (`sub`).
    ///   - namespace: The namespace every token names (`ns`); a token for another user or namespace
    ///     is not used (``SyncServiceError/tokenMismatch(user:namespace:)``).
    ///   - passphrase: The secret every machine of the user shares, for end-to-end encryption;
    ///     never sent anywhere.
    ///   - options: Reconnection, timeouts and TLS; the provider has ``Options/responseTimeout``
    ///     to answer.
    ///   - tokenProvider: Fetches a fresh token, for example from your sign-in service.
    /// - Throws: ``SyncServiceError`` for a URL that cannot be used, `EndToEndError` for an empty
    ///   passphrase.
    public init(
        url: String, user: String, namespace: String, passphrase: String? = nil, options: Options = Options(),
        tokenProvider: @escaping TokenProvider
    ) throws {
        guard let endpoint = ServiceEndpoint(url: url) else { throw SyncServiceError.invalidURL(url) }
        self.user = user
        self.namespace = namespace
        let connection = ServiceConnection(
            endpoint: endpoint, user: user, namespace: namespace, tokenProvider: tokenProvider,
            description: "\(endpoint) (user \(user), namespace \(namespace))", options: options)
        if let passphrase {
            // Salted with the user and the namespace: two users with one passphrase share no key.
            store = try EncryptedSyncStore(connection, passphrase: passphrase, namespace: "\(user)\n\(namespace)")
        } else {
            store = connection
        }
        description = store.description
    }

    public func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        await store.run(reporting: report)
    }

    public func timestamps() async throws -> [String: SyncTimestamp] {
        try await store.timestamps()
    }

    public func changesSinceLastConnection() async throws -> [SyncRecord]? {
        try await store.changesSinceLastConnection()
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        try await store.records(forKeys: keys)
    }

    public func push(_ records: [SyncRecord]) async throws {
        try await store.push(records)
    }
}
