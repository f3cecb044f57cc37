import Defaults
import DefaultsSyncClient
import DefaultsSyncSQL
import Foundation

/// The sync store `$DEFAULTS_SYNC_URL` names, and what it holds. The sync service's store is made
/// as an application makes it and asked through `DefaultsSyncStore`: `run(reporting:)` until it
/// reports a connection or a failure, then `timestamps()`. A PostgreSQL database is only read, in
/// one read-only transaction (`readOnlyView`): `PostgresSyncStore` is never run, since connecting
/// it runs its migration, which a role that may only read is refused even when there is nothing
/// to migrate.
struct StatusStore {
    /// Where the records are read from.
    enum Source {
        /// A PostgreSQL database, read directly.
        case postgres(PostgresURL)
        /// A store run until it connects: the sync service's.
        case store(any DefaultsSyncStore)
    }

    /// `postgres` (a `PostgresSyncStore`'s database) or `sync-service` (`SyncServiceStore`).
    let kind: String
    let source: Source
    /// What the report calls the store: never a password or a token.
    let label: String
    /// Whether the store's records are those of a namespace the user named (a PostgreSQL URL
    /// without `$DEFAULTS_SYNC_NAMESPACE` checks the server alone).
    let countsRecords: Bool
    /// The namespace whose rows a PostgreSQL database's are counted for.
    var namespace: String?
    /// How long the store or the database may take to answer.
    var timeout: Duration = .seconds(10)

    /// What the store holds for the namespace.
    struct View: Sendable {
        var records: Int?
        /// The newest record's version, as the clock of the machine that wrote it read.
        var lastChange: Date?
        /// What the report says of the database besides (a database nothing has synced through,
        /// a schema older than this program's).
        var note: String?
    }

    /// Makes the store `url` names.
    ///
    /// - Parameters:
    ///   - url: `postgres://…` or `ws://…`/`wss://…`; `nil` when not set.
    ///   - namespace: The application's namespace, or `nil`. The sync service's comes from its token.
    ///   - token: The sync service's token, or `nil`.
    ///   - timeout: How long the store may take to answer one call.
    static func make(url: String?, namespace: String?, token: String?, timeout: Duration) throws(StatusProblem)
        -> StatusStore
    {
        let urlVariable = "$\(DefaultsSyncTool.urlVariable)"
        guard let url else {
            throw StatusProblem(
                .noStore,
                "no store configured: set \(DefaultsSyncTool.urlVariable) to postgres://user@host:5432/database "
                    + "or to the sync service's wss://host")
        }
        // Never echoed: a URL can hold a password.
        guard let scheme = URLComponents(string: url)?.scheme?.lowercased(), !scheme.isEmpty else {
            throw StatusProblem(
                .badURL, "\(urlVariable) is not a URL: postgres://user@host:5432/database or wss://host expected")
        }
        switch scheme {
        case "postgres", "postgresql":
            return try postgres(url: url, namespace: namespace, timeout: timeout)
        case "ws", "wss":
            return try service(url: url, namespace: namespace, token: token, timeout: timeout)
        default:
            throw StatusProblem(
                .unknownScheme,
                "\(urlVariable) has the scheme \(scheme.debugDescription), which names no sync store: use "
                    + "postgres:// (PostgreSQL) or ws:// or wss:// (the sync service)")
        }
    }

    private static func postgres(url: String, namespace: String?, timeout: Duration) throws(StatusProblem)
        -> StatusStore
    {
        let database: PostgresURL
        do {
            database = try PostgresURL(url)
            // What an application's store would refuse (a TLS setting it cannot load) fails here too.
            _ = try database.servers()
        } catch let error as SyncSQLError {
            throw StatusProblem(.badURL, error.description)
        } catch {
            // Neither describes the password.
            throw StatusProblem(.badURL, "\(error)")
        }
        return StatusStore(
            kind: "postgres", source: .postgres(database),
            label: "\(database)" + (namespace.map { " (namespace \($0))" } ?? ""), countsRecords: namespace != nil,
            namespace: namespace, timeout: timeout)
    }

    private static func service(url: String, namespace: String?, token: String?, timeout: Duration)
        throws(StatusProblem) -> StatusStore
    {
        guard let components = URLComponents(string: url), components.host?.isEmpty == false else {
            throw StatusProblem(
                .badURL, "$\(DefaultsSyncTool.urlVariable) names no host: ws://host:port or wss://host expected")
        }
        guard let token else {
            throw StatusProblem(
                .noToken,
                "the sync service needs a token: set \(DefaultsSyncTool.tokenVariable) to one for the user "
                    + "and namespace (from the sign-in service, or defaults-sync-server token)")
        }
        var options = SyncServiceStore.Options()
        options.responseTimeout = timeout
        options.pingInterval = timeout
        let store: SyncServiceStore
        do {
            store = try SyncServiceStore(url: url, token: token, options: options)
        } catch SyncServiceError.invalidURL {
            throw StatusProblem(
                .badURL, "$\(DefaultsSyncTool.urlVariable) is not ws://host:port or wss://host")
        } catch SyncServiceError.invalidToken {
            throw StatusProblem(.badToken, "$\(DefaultsSyncTool.tokenVariable): \(SyncServiceError.invalidToken)")
        } catch {
            throw StatusProblem(.badURL, "\(error)")
        }
        if let namespace, namespace != store.namespace {
            throw StatusProblem(
                .namespaceMismatch,
                "the token names the namespace \(store.namespace.debugDescription), not "
                    + "$\(DefaultsSyncTool.namespaceVariable)'s \(namespace.debugDescription)")
        }
        return StatusStore(
            kind: "sync-service", source: .store(store), label: store.description, countsRecords: true,
            timeout: timeout)
    }

    /// What the store holds: a PostgreSQL database read, or the store run until it reports a
    /// connection or a failure, and once connected asked for its records (when it names a
    /// namespace), then stopped. The caller bounds the wait.
    func view() async throws -> View {
        switch source {
        case .postgres(let database): try await readOnlyView(of: database)
        case .store(let store): try await view(running: store)
        }
    }

    private func view(running store: any DefaultsSyncStore) async throws -> View {
        let (events, sink) = AsyncStream.makeStream(of: SyncEvent.self)
        let running = Task {
            await store.run { sink.yield($0) }
            sink.finish()
        }
        defer { running.cancel() }
        for await event in events {
            switch event {
            case .connected:
                guard countsRecords else { return View() }
                let timestamps: [String: SyncTimestamp]
                do {
                    timestamps = try await store.timestamps()
                } catch {
                    throw StatusProblem(.storeFailed, "connected, but the store could not list its records: \(error)")
                }
                let newest = timestamps.values.map(\.wallTime).max()
                return View(
                    records: timestamps.count,
                    lastChange: newest.map { Date(timeIntervalSince1970: Double($0) / 1000) })
            case .disconnected(let error):
                throw problem(connecting: error)
            case .received:
                continue
            }
        }
        throw StatusProblem(.unreachable, "\(label): the store stopped before it connected")
    }

    /// The problem a failed connection is.
    private func problem(connecting error: any Error) -> StatusProblem {
        // The sync service's errors say what failed; anything else is the WebSocket's, failing to
        // connect.
        let message = error is SyncServiceError ? "\(label): \(error)" : "\(label): cannot connect: \(error)"
        switch error as? SyncServiceError {
        case .unauthorized?, .tokenMismatch?: return StatusProblem(.refusedToken, message)
        case .invalidToken?: return StatusProblem(.badToken, message)
        case .timedOut?: return StatusProblem(.timedOut, message)
        default: return StatusProblem(.unreachable, message)
        }
    }
}
