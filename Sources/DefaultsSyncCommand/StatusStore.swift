import Defaults
import DefaultsPostgres
import DefaultsSyncClient
import DefaultsSyncSQL
import Foundation

/// The sync store `$DEFAULTS_SYNC_URL` names, made as an application makes it, and asked for its
/// view through `DefaultsSyncStore`: `run(reporting:)` until it reports a connection or a
/// failure, then `timestamps()`. A PostgreSQL database is inspected first, read only, and the store
/// is run only on one at this program's schema, which it would not change
/// (`viewWithoutMigrating`).
struct StatusStore {
    /// `postgres` (`PostgresSyncStore`) or `sync-service` (`SyncServiceStore`).
    let kind: String
    let store: any DefaultsSyncStore
    /// What the report calls the store: never a password or a token.
    let label: String
    /// Whether the store's records are those of a namespace the user named (a PostgreSQL URL
    /// without `$DEFAULTS_SYNC_NAMESPACE` checks the server alone).
    let countsRecords: Bool
    /// The PostgreSQL database, inspected before the store runs; `nil` for the sync service.
    var database: PostgresURL?
    /// The namespace whose records a PostgreSQL database's rows are counted for, when the store is
    /// not run.
    var namespace: String?
    /// How long the store and the inspection may take to answer.
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

    /// The namespace a PostgreSQL store connects with when none is named: it only checks the server.
    static let serverCheckNamespace = "defaults-sync-status"

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
        let store: PostgresSyncStore
        let database: PostgresURL
        do {
            database = try PostgresURL(url)
            store = try PostgresSyncStore(
                configuration: PostgresSyncStore.configuration(url: url),
                namespace: namespace ?? serverCheckNamespace, responseTimeout: timeout,
                livenessCheckInterval: timeout)
        } catch let error as SyncSQLError {
            throw StatusProblem(.badURL, error.description)
        } catch {
            // PostgresSyncError's description never holds the password.
            throw StatusProblem(.badURL, "\(error)")
        }
        return StatusStore(
            kind: "postgres", store: store, label: namespace == nil ? store.endpoint : store.description,
            countsRecords: namespace != nil, database: database, namespace: namespace, timeout: timeout)
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
            kind: "sync-service", store: store, label: store.description, countsRecords: true, timeout: timeout)
    }

    /// Runs the store until it reports a connection or a failure; once connected, lists its records
    /// (when it names a namespace). Returns (and stops the store) then; the caller bounds the wait.
    /// A PostgreSQL database that running the store would change is reported without running it.
    func view() async throws -> View {
        if let database, let view = try await viewWithoutMigrating(database) {
            return view
        }
        let (events, sink) = AsyncStream.makeStream(of: SyncEvent.self)
        let store = store
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
        // PostgreSQL's errors name the server already, and the sync service's say what failed;
        // anything else is the WebSocket's, failing to connect.
        let message =
            switch error {
            case is PostgresSyncError: "\(error)"
            case is SyncServiceError: "\(label): \(error)"
            default: "\(label): cannot connect: \(error)"
            }
        switch error as? SyncServiceError {
        case .unauthorized?, .tokenMismatch?: return StatusProblem(.refusedToken, message)
        case .invalidToken?: return StatusProblem(.badToken, message)
        case .timedOut?: return StatusProblem(.timedOut, message)
        default: return StatusProblem(.unreachable, message)
        }
    }
}
