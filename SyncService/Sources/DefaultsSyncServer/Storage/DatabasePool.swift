import DefaultsSyncSQL
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The instance's pool of connections to the primary: one PostgresNIO pool on the server the
/// database URL's servers choose (``PostgresServers``), replaced by one on another server when
/// the primary moves.
///
/// With one server in the URL (PostgreSQL itself, or HAProxy routing to a Patroni cluster's
/// primary) the pool stays, and PostgresNIO reconnects it. With several
/// (`h1,h2,h3/db?target_session_attrs=read-write`), a request that finds the primary lost or
/// read-only (``PostgresServers/isLostPrimary(_:)``), or the change listener losing it, starts a
/// search: every server is asked in turn, every quarter of a second, until one accepts writes;
/// a pool on it takes the requests from then on, and the old pool is shut down, its connections
/// closed, never reused.
final class DatabasePool: Service, Sendable {
    private struct Pooled: Sendable {
        let index: Int
        let client: PostgresClient
        /// Finished when the pool is replaced: its `run` then ends.
        let retirement: AsyncStream<Void>.Continuation
    }

    private struct State {
        var current: Pooled
        /// Pools made and not yet run, each with the stream that tells it to stop.
        var toRun: [(Pooled, AsyncStream<Void>)]
        var isSearching = false
        /// Set as the instance stops: no request, search or pool starts from then on.
        var isStopped = false
        /// Requests under way, which the pools outlive at a stop.
        var requests = 0
        /// The stop's wait for the last of them.
        var lastAnswered: CheckedContinuation<Void, Never>?
        /// Whether the first pool runs yet, and the requests waiting until it does (PostgresNIO
        /// warns of a request for a pool that does not).
        var isRunning = false
        var waitingForRun: [CheckedContinuation<Void, Never>] = []
    }

    private let database: PostgresURL
    private let servers: PostgresServers
    private let maximumConnections: Int
    private let logger: Logger
    private let state: Mutex<State>
    /// Wakes ``run()`` when a pool is made.
    private let made: AsyncStream<Void>.Continuation
    private let making: AsyncStream<Void>

    /// How often a search asks the servers again while none accepts writes (a failover takes
    /// Patroni about its `ttl`).
    static let searchInterval = Duration.milliseconds(250)
    /// The longest a search goes on; the next lost request starts another.
    static let longestSearch = Duration.seconds(120)
    /// The longest a transaction may take, the wait for a pooled connection included.
    static let transactionLimit = Duration.seconds(30)
    /// The longest a retired or stopped pool is given to close its connections.
    static let poolStopLimit = Duration.seconds(10)

    /// A pool on `startingAt`, the index of one of the URL's servers.
    init(database: PostgresURL, startingAt index: Int, maximumConnections: Int, logger: Logger) throws {
        self.database = database
        servers = try database.servers()
        self.maximumConnections = maximumConnections
        self.logger = logger
        (making, made) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (pooled, retired) = Self.pool(
            index: index, database: database, maximumConnections: maximumConnections, logger: logger)
        state = Mutex(State(current: pooled, toRun: [(pooled, retired)]))
        made.yield()
    }

    private static func pool(index: Int, database: PostgresURL, maximumConnections: Int, logger: Logger)
        -> (Pooled, AsyncStream<Void>)
    {
        var configuration = database.clientConfiguration(
            endpoint: database.endpoints.isEmpty ? nil : database.endpoints[index])
        configuration.options.maximumConnections = maximumConnections
        let (retired, retirement) = AsyncStream<Void>.makeStream()
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return (Pooled(index: index, client: client, retirement: retirement), retired)
    }

    /// Runs every pool until it is replaced, and all of them until the instance stops or the task
    /// is cancelled. At a stop, requests under way end first (within their deadline), on
    /// connections left open: PostgresNIO, stopped, closes the connections requests hold, and
    /// never answers their queries.
    func run() async {
        await withDiscardingTaskGroup { group in
            func runWaitingPools() {
                let toRun = state.withLock { state in
                    defer { state.toRun = [] }
                    return state.toRun
                }
                for (pooled, retired) in toRun {
                    group.addTask {
                        let running = Task.detached {
                            self.startedRunning()
                            await pooled.client.run()
                        }
                        // Until retired or cancelled; apart from the instance's graceful stop,
                        // which PostgresNIO would answer by closing its connections at once.
                        for await _ in retired {}
                        running.cancel()
                        // PostgresNIO's pool ends once its last connection has; a keep-alive query
                        // on a connection that has just closed is never answered (``Deadline``).
                        // Waited for at most `poolStopLimit`, even by a cancelled stop.
                        let stopped = await Task {
                            (try? await Deadline.run(Self.poolStopLimit) { await running.value }) != nil
                        }.value
                        if !stopped {
                            self.logger.warning(
                                "a pool of database connections did not stop within \(Self.poolStopLimit); left behind")
                        }
                    }
                }
            }
            await withGracefulShutdownHandler {
                for await _ in making { runWaitingPools() }
            } onGracefulShutdown: {
                self.made.finish()
            }
            state.withLock { $0.isStopped = true }
            made.finish()
            // Even a pool made as the instance stops runs: a request for a pool that never ran
            // would wait until its deadline.
            runWaitingPools()
            if !Task.isCancelled { await lastRequestAnswered() }
            group.cancelAll()
        }
    }

    /// Lets the requests waiting for the first pool's run go on.
    private func startedRunning() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.isRunning else { return [] }
            state.isRunning = true
            defer { state.waitingForRun = [] }
            return state.waitingForRun
        }
        for request in waiting { request.resume() }
    }

    /// Returns when no request is under way; called once the pool is stopped.
    private func lastRequestAnswered() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.requests > 0 else { return true }
                state.lastAnswered = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The pool for a request, once it runs, counted until ``end()``; refused once the instance
    /// stops.
    private func begin() async throws -> Pooled {
        if !state.withLock({ $0.isRunning }) {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard !state.isRunning else { return true }
                    state.waitingForRun.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
        return try state.withLock { state in
            guard !state.isStopped else { throw ServiceStorageError("the instance is stopping") }
            state.requests += 1
            return state.current
        }
    }

    private func end() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.requests -= 1
            guard state.requests == 0 else { return nil }
            defer { state.lastAnswered = nil }
            return state.lastAnswered
        }?.resume()
    }

    /// Runs `body` in a transaction on a pooled connection to the primary, within
    /// ``transactionLimit`` (``Deadline``), the wait for the connection included.
    ///
    /// A transaction past its limit is answered with ``Deadline/Passed`` and its connection closed;
    /// when that connection was closed already (PostgresNIO never answers a query on a connection
    /// that closed under it, nor gives the connection back), the pool is replaced, so that such
    /// connections do not use it up. A cancelled caller (its device gone) is answered at once and
    /// its transaction cancelled, so that an abandoned request holds no share of the database.
    func withTransaction<Result: Sendable>(
        logger: Logger, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let pooled = try await begin()
        defer { end() }
        let used = UsedConnection()
        do {
            return try await Deadline.run(Self.transactionLimit) {
                try await pooled.client.withTransaction(logger: logger) { connection in
                    used.connection.withLock { $0 = connection }
                    return try await body(connection)
                }
            }
        } catch let passed as Deadline.Passed {
            if let connection = used.connection.withLock({ $0 }) {
                if connection.isClosed {
                    renew(pooled)
                } else {
                    try? await connection.close()
                }
            }
            throw passed
        } catch {
            if PostgresServers.isLostPrimary(error) { searchForPrimary() }
            throw error
        }
    }

    /// Runs `query` on a pooled connection to the primary, within ``transactionLimit``.
    func query(_ query: PostgresQuery, logger: Logger) async throws {
        let client = try await begin().client
        defer { end() }
        do {
            try await Deadline.run(Self.transactionLimit) { _ = try await client.query(query, logger: logger) }
        } catch {
            if PostgresServers.isLostPrimary(error) { searchForPrimary() }
            throw error
        }
    }

    /// Moves the pool to server `index` (a connection found it accepts writes: the listener's),
    /// unless it is there already.
    func follow(_ index: Int) {
        guard servers.configurations.count > 1 else { return }
        guard let retired = replace(unless: { $0.index == index }, with: index) else { return }
        logger.notice(
            "the primary is \(database.endpoints[index]) now (was \(database.endpoints[retired.index])): pooled connections moved"
        )
    }

    /// Replaces `stale` by a new pool on the same server, and looks for the primary again: a
    /// request on it passed its deadline, holding a connection that may never be given back.
    private func renew(_ stale: Pooled) {
        guard replace(unless: { $0.client !== stale.client }, with: stale.index) != nil else { return }
        logger.warning(
            "a transaction passed its deadline of \(Self.transactionLimit): the database's connections are made anew")
        searchForPrimary()
    }

    /// Puts a new pool on server `index` in the current one's place, unless `keep` holds for the
    /// current one; returns the pool replaced, whose connections are then closed.
    private func replace(unless keep: (Pooled) -> Bool, with index: Int) -> Pooled? {
        let retired = state.withLock { state -> Pooled? in
            guard !state.isStopped, !keep(state.current) else { return nil }
            let (pooled, retired) = Self.pool(
                index: index, database: database, maximumConnections: maximumConnections, logger: logger)
            let old = state.current
            state.current = pooled
            state.toRun.append((pooled, retired))
            made.yield()
            return old
        }
        retired?.retirement.finish()
        return retired
    }

    /// Looks for the server that accepts writes, unless a search is under way or the URL names
    /// one server.
    func searchForPrimary() {
        guard servers.configurations.count > 1 else { return }
        let begins = state.withLock { state -> Bool in
            guard !state.isSearching, !state.isStopped else { return false }
            state.isSearching = true
            return true
        }
        guard begins else { return }
        Task {
            defer { state.withLock { $0.isSearching = false } }
            let started = ContinuousClock.now
            while started.duration(to: .now) < Self.longestSearch, !state.withLock({ $0.isStopped }) {
                if let (connection, index) = try? await servers.connect(id: 0, logger: logger) {
                    try? await connection.close()
                    follow(index)
                    return
                }
                try? await Task.sleep(for: Self.searchInterval)
            }
            logger.warning("no server of \(database) accepted writes for \(Self.longestSearch)")
        }
    }
}

/// The connection a transaction got from the pool, to close when it passes its deadline.
private final class UsedConnection: Sendable {
    let connection = Mutex<PostgresConnection?>(nil)
}
