import DefaultsSyncProtocol
import DefaultsSyncSQL
import Logging
import PostgresNIO

/// What an instance holds for one database it serves: the pool on its primary, the storage over
/// it and the fan-out listening on it. The instance's own database is one (``InstanceNodes/main``),
/// and each node of the directory another.
final class ServiceNode: Sendable {
    /// The directory's name of the node; `nil` for the instance's own database.
    let name: String?
    let pool: DatabasePool
    let storage: ServiceStorage
    let fanout: ChangeFanout

    /// Opens the database at `url`: migrates its schema, warns of what weakens row-level security,
    /// and makes the pool and the fan-out (``run()`` runs them).
    static func open(
        name: String?, url: String, configuration: SyncServerConfiguration, metrics: ServerMetrics, logger: Logger
    ) async throws -> ServiceNode {
        var logger = logger
        if let name { logger[metadataKey: "node"] = "\(name)" }
        let database = try PostgresURL(url)
        let servers = try database.servers()
        let primary = try await prepare(database, servers: servers, logger: logger)
        let pool = try DatabasePool(
            database: database, startingAt: primary, maximumConnections: configuration.databaseConnections,
            logger: logger)
        let storage = ServiceStorage(
            pool: pool, limits: configuration.limits,
            userShare: UserDatabaseShare(
                connections: configuration.userDatabaseShare, userConnections: configuration.limits.userConnections),
            logger: logger)
        let fanout = ChangeFanout(storage: storage, servers: servers, metrics: metrics, logger: logger)
        return ServiceNode(name: name, pool: pool, storage: storage, fanout: fanout)
    }

    private init(name: String?, pool: DatabasePool, storage: ServiceStorage, fanout: ChangeFanout) {
        self.name = name
        self.pool = pool
        self.storage = storage
        self.fanout = fanout
    }

    /// Runs the pool and the fan-out until the instance stops or the task is cancelled (the node
    /// left the directory).
    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.pool.run() }
            group.addTask { try await self.fanout.run() }
        }
    }

    /// The longest a node's preparation (the schema's migration, the role's checks) may take.
    static let preparationLimit = Duration.seconds(300)

    /// Migrates the schema, and warns when row-level security cannot hold the server's role;
    /// returns the server (of the URL's list) it did so on.
    private static func prepare(
        _ database: PostgresURL, servers: PostgresServers, logger: Logger
    ) async throws -> Int {
        let connection: PostgresConnection
        let server: Int
        do {
            (connection, server) = try await servers.connect(id: 0, logger: logger)
        } catch {
            throw ServiceStorageError("cannot connect to \(database): \(String(reflecting: error))")
        }
        defer { Task { try? await connection.close() } }
        // Within a deadline, and given up at once by a stopping instance: a database that stops
        // answering, or a migration waiting for another instance's lock, would hold it for ever.
        try await Deadline.run(Self.preparationLimit) {
            try await ServiceSchema.migrator.migrate(connection, logger: logger)
            if try await ServiceSchema.bypassesRowSecurity(connection, logger: logger) {
                logger.warning(
                    "\(database.user) is a superuser or has BYPASSRLS: row-level security does not hold it; connect as an ordinary role"
                )
            }
            try await ServiceSchema.warnOfOtherRoles(connection, logger: logger)
        }
        return server
    }
}
