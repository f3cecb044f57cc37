import DefaultsSyncProtocol
import Logging
import ServiceLifecycle
import Synchronization

/// The databases an instance serves: its own (``main``: tokens naming no node, and the directory
/// of nodes, ``NodeDirectory``) and every node of the directory, which it reads each second:
/// a node added is opened, one removed closed with its devices, one down has its devices closed,
/// and a user moved has their devices on any other node closed, each as
/// ``DefaultsSyncProtocol/SyncCloseReason/moved``.
final class InstanceNodes: Service, Sendable {
    /// The instance's own database.
    let main: ServiceNode
    private let configuration: SyncServerConfiguration
    private let metrics: ServerMetrics
    private let logger: Logger

    private struct Named: Sendable {
        var state: StorageNode.State
        var reference: StorageNode.Reference
        /// Open once its database answered.
        var node: ServiceNode?
        /// Which opening this is: a node whose reference changed is opened afresh, and the task of
        /// the earlier one ends.
        var generation: Int
    }

    private let named = Mutex<[String: Named]>([:])
    private let generations = Atomic<Int>(0)
    /// The nodes to open (name and generation), for ``run()``'s task group.
    private let opening: AsyncStream<(String, Int)>.Continuation
    private let toOpen: AsyncStream<(String, Int)>

    /// How often the directory is read.
    static let watchInterval = Duration.seconds(1)
    /// How long after failing to open a node's database it is tried again.
    static let reopenDelay = Duration.seconds(5)

    init(main: ServiceNode, configuration: SyncServerConfiguration, metrics: ServerMetrics, logger: Logger) {
        self.main = main
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        (toOpen, opening) = AsyncStream.makeStream()
    }

    /// The node named `name` (``main`` for `nil`), while this instance has it open.
    func node(named name: String?) -> ServiceNode? {
        guard let name else { return main }
        return named.withLock { $0[name]?.node }
    }

    /// What serves a device whose token carries given claims.
    enum Serving: Sendable {
        case node(ServiceNode)
        /// The token's node is not the user's, or takes no devices: the device asks for a new token.
        case moved(String)
        /// The node is the user's, but this instance cannot reach its database yet.
        case unavailable(String)
    }

    /// The node of a device's token (``main`` when it names none), while the directory says it is
    /// available and holds the user (read afresh: a device moved a moment ago must not be let in
    /// on its old node). A node this instance has not opened yet is waited for a few seconds.
    func serving(_ claims: TokenClaims) async throws -> Serving {
        guard let name = claims.node else { return .node(main) }
        let (user, logger) = (claims.user, logger)
        let (state, assigned) = try await main.pool.withTransaction(logger: logger) { connection in
            try await NodeDirectory.placement(of: user, on: name, on: connection, logger: logger)
        }
        guard let state else { return .moved("the service has no node \(name)") }
        guard state == .available else { return .moved("node \(name) is \(state.rawValue)") }
        guard assigned == name else {
            return .moved(
                "the user's settings are on \(assigned.map { "node \($0)" } ?? "no node yet"), not on \(name)")
        }
        let opening = ContinuousClock.now
        while opening.duration(to: .now) < Self.openingWait {
            if let node = self.node(named: name) { return .node(node) }
            try await Task.sleep(for: .milliseconds(100))
        }
        return .unavailable("node \(name) cannot be reached from this instance yet")
    }

    /// How long a device waits for its node to be opened (added a moment ago, or not answering).
    static let openingWait = Duration.seconds(3)

    /// Runs the instance's own database, the directory's watch and every node it opens, until the
    /// instance stops.
    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.main.run() }
            group.addTask { await self.watch() }
            // Ends when the watch ends, at the instance's stop.
            for await (name, generation) in toOpen {
                group.addTask { await self.serve(name, generation: generation) }
            }
        }
    }

    /// How many of the directory's reads apart the placement of every user with devices on a node
    /// is read again: a move that the window of recent moves did not show (one committed late, or
    /// while the directory could not be read, or during a device's admission) is caught by then.
    static let placementCheckEvery = 10

    /// Reads the directory every ``watchInterval`` until the instance stops.
    private func watch() async {
        var warned = false
        var reads = 0
        while !Task.isCancelledOrShuttingDown {
            reads += 1
            if reads % Self.placementCheckEvery == 0 {
                await checkPlacements()
            }
            do {
                let logger = logger
                let (nodes, moves) = try await main.pool.withTransaction(logger: logger) { connection in
                    (
                        try await NodeDirectory.nodes(on: connection, logger: logger),
                        try await NodeDirectory.recentMoves(on: connection, logger: logger)
                    )
                }
                warned = false
                await apply(nodes, moves: moves)
            } catch {
                if Task.isCancelledOrShuttingDown { break }  // ended by the stop: nothing to say
                // Once, however long the database stays away: its loss is logged elsewhere too.
                if !warned {
                    logger.warning("could not read the directory of nodes: \(escaped(String(reflecting: error)))")
                    warned = true
                }
            }
            // Woken by the instance's stop, which need not wait for the next read.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.watchInterval) }
        }
        opening.finish()
    }

    /// Opens the nodes added, closes those removed or down, and closes the devices of users moved
    /// on every node but their own.
    private func apply(_ nodes: [StorageNode], moves: [(String, String)]) async {
        let (added, removed) = named.withLock { named -> ([(String, Int)], [ServiceNode]) in
            var added: [(String, Int)] = []
            var removed: [ServiceNode] = []
            let listed = Set(nodes.map(\.name))
            for (name, entry) in named where !listed.contains(name) {
                named[name] = nil
                if let node = entry.node { removed.append(node) }
            }
            for node in nodes {
                if let entry = named[node.name], entry.reference == node.reference {
                    named[node.name]?.state = node.state
                    continue
                }
                // New, or its database's reference changed: opened afresh.
                if let old = named[node.name]?.node { removed.append(old) }
                let generation = generations.add(1, ordering: .relaxed).newValue
                named[node.name] = Named(state: node.state, reference: node.reference, generation: generation)
                added.append((node.name, generation))
            }
            return (added, removed)
        }
        for node in removed {
            let closed = await node.fanout.closeDevices(of: nil, .moved, detail: "the node left the directory")
            logger.notice("node \(node.name ?? "") left the directory: closed \(closed) device(s)")
        }
        for node in added {
            opening.yield(node)
        }
        let open = named.withLock { named -> [(name: String, node: ServiceNode, state: StorageNode.State)] in
            named.compactMap { name, entry in entry.node.map { (name, $0, entry.state) } }
        }
        for open in open where open.state == .down {
            let closed = await open.node.fanout.closeDevices(of: nil, .moved, detail: "node \(open.name) is down")
            if closed > 0 { logger.notice("node \(open.name) is down: closed \(closed) device(s)") }
        }
        for (user, node) in moves {
            for open in open where open.name != node {
                let closed = await open.node.fanout.closeDevices(
                    of: user, .moved, detail: "the user's settings moved to node \(node)")
                if closed > 0 {
                    logger.notice(
                        "user \(escaped(user)) moved from node \(open.name) to \(node): closed \(closed) device(s)")
                }
            }
        }
    }

    /// Closes, as moved, the devices of every user whose node in the directory is no longer the
    /// one they are connected to here.
    private func checkPlacements() async {
        let open = named.withLock { named in named.compactMap { name, entry in entry.node.map { (name, $0) } } }
        for (name, node) in open {
            let users = await node.fanout.users
            guard !users.isEmpty else { continue }
            do {
                let logger = logger
                let placed = try await main.pool.withTransaction(logger: logger) { connection in
                    try await NodeDirectory.assignments(of: Array(users), on: connection, logger: logger)
                }
                for user in users where placed[user] != name {
                    let closed = await node.fanout.closeDevices(
                        of: user, .moved, detail: "the user's settings are on \(placed[user] ?? "no node") now")
                    logger.notice("user \(escaped(user)) is no longer on node \(name): closed \(closed) device(s)")
                }
            } catch {
                if Task.isCancelledOrShuttingDown { return }
                logger.warning(
                    "could not read the placement of node \(name)'s users: \(escaped(String(reflecting: error)))")
            }
        }
    }

    /// Opens node `name`'s database, trying again every ``reopenDelay`` while it does not answer,
    /// and runs it while the directory's entry is this `generation`'s and the instance runs.
    private func serve(_ name: String, generation: Int) async {
        var warned = false
        while let entry = named.withLock({ $0[name] }), entry.generation == generation, !Task.isCancelledOrShuttingDown
        {
            do {
                let url = try entry.reference.resolve()
                // Given up at once by a stopping instance: a migration may wait on another's lock.
                let node = try await cancelWhenGracefulShutdown { [configuration, metrics, logger] in
                    try await ServiceNode.open(
                        name: name, url: url, configuration: configuration, metrics: metrics, logger: logger)
                }
                // Left the directory, or its reference changed, while it opened: never run.
                guard
                    named.withLock({ named in
                        guard named[name]?.generation == generation else { return false }
                        named[name]?.node = node
                        return true
                    })
                else { return }
                logger.notice("serving node \(name)")
                await withDiscardingTaskGroup { group in
                    group.addTask { try? await node.run() }
                    while !Task.isCancelledOrShuttingDown, named.withLock({ $0[name]?.generation == generation }) {
                        try? await Task.sleep(for: Self.watchInterval)
                    }
                    group.cancelAll()
                }
                return
            } catch {
                if Task.isCancelledOrShuttingDown { return }
                if !warned {
                    logger.warning("cannot open node \(name): \(escaped(String(reflecting: error))); trying again")
                    warned = true
                }
                try? await Task.sleep(for: Self.reopenDelay)
            }
        }
    }
}
