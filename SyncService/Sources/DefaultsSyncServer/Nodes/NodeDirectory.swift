import DefaultsSyncSQL
import Foundation
import Logging
import PostgresNIO

/// The directory of the service's nodes and of the node each user is assigned to, in the database
/// of the instances' own URL (`--database-url`), as Firefox Sync's token server keeps its nodes.
///
/// - A user is assigned at their first token to the available node with the most room for its
///   capacity (``assign(user:)``, or `SELECT defaults_sync_service_assign(user)` from a sign-in
///   service in any language); the token names that node (`node`), and every instance serves it.
/// - A token naming a node is accepted only while that node is available and the user is still
///   assigned to it; otherwise its device is closed as ``DefaultsSyncProtocol/SyncCloseReason/moved``,
///   asks its token provider for a new token (whose assignment moves the user off a draining or
///   lost node) and sends what it holds to its new node. The server never copies a user's rows:
///   end-to-end encrypted namespaces move without being read.
/// - Draining a node moves its users one at a time (``drain(_:pace:moved:)``); every instance
///   reads the moves each second and closes the moved users' devices on their old node.
///
/// A token naming no node is served from the instances' own database, as in a deployment of one:
/// adding nodes changes nothing for those tokens.
public final class NodeDirectory: Sendable {
    private let connection: PostgresConnection
    private let logger: Logger

    private init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Connects to the directory in the database at `databaseURL` (the instances' own), bringing
    /// its schema up to date.
    public static func connect(databaseURL: String, logger: Logger) async throws -> NodeDirectory {
        NodeDirectory(
            connection: try await ServiceSchema.connectMigrated(to: databaseURL, logger: logger), logger: logger)
    }

    /// Closes the connection.
    public func close() async {
        try? await connection.close()
    }

    /// Adds an available node.
    public func add(_ node: StorageNode) async throws {
        guard StorageNode.isValidName(node.name) else {
            throw NodeDirectoryError(
                "\"\(node.name)\" is not a node's name: 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        }
        guard node.capacity > 0, node.capacity <= Int(Int32.max) else {
            throw NodeDirectoryError("a node's capacity is a number of users, at least 1")
        }
        let rows = try await connection.query(
            """
            INSERT INTO defaults_sync_service_nodes (name, reference, capacity, state)
            VALUES (\(node.name), \(node.reference.description), \(Int32(node.capacity)), \(node.state.rawValue))
            ON CONFLICT (name) DO NOTHING RETURNING name
            """, logger: logger)
        for try await _ in rows.decode(String.self) { return }
        throw NodeDirectoryError("a node named \(node.name) is in the directory already")
    }

    /// Every node, by name.
    public func nodes() async throws -> [StorageNode] {
        try await Self.nodes(on: connection, logger: logger)
    }

    /// The node of `user`'s settings: the one they are assigned to while it is available, else the
    /// available node with the most room for its capacity, to which they are assigned from now
    /// on (their devices on the old one are closed as moved by every instance).
    ///
    /// - Throws: ``NodeDirectoryError`` when no node is available with room.
    public func assign(user: String) async throws -> String {
        do {
            let rows = try await connection.query("SELECT defaults_sync_service_assign(\(user))", logger: logger)
            for try await node in rows.decode(String.self) { return node }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == Self.noRoomState {
            throw NodeDirectoryError("no node is available with room for another user: add one (nodes add)")
        }
        throw NodeDirectoryError("no node is available with room for another user: add one (nodes add)")
    }

    /// The node `user` is assigned to, if any.
    public func assignment(of user: String) async throws -> String? {
        try await Self.assignment(of: user, on: connection, logger: logger)
    }

    /// Sets a node's state: `available` again, or `down` (lost: every instance closes its
    /// devices, and its users are assigned elsewhere at their next token).
    public func setState(_ state: StorageNode.State, of name: String) async throws {
        let rows = try await connection.query(
            "UPDATE defaults_sync_service_nodes SET state = \(state.rawValue) WHERE name = \(name) RETURNING name",
            logger: logger)
        for try await _ in rows.decode(String.self) { return }
        throw NodeDirectoryError("no node is named \(name)")
    }

    /// Marks the node draining and moves its users one at a time, `pace` apart, each to the node
    /// ``assign(user:)`` gives; `moved` is told how many moved so far after each. Returns how many
    /// moved. Ends when none is left, as the node can then be removed.
    public func drain(
        _ name: String, pace: Duration = .milliseconds(100), moved: (Int) -> Void = { _ in }
    ) async throws -> Int {
        try await setState(.draining, of: name)
        var count = 0
        while true {
            let rows = try await connection.query(
                "SELECT user_id FROM defaults_sync_service_assignments WHERE node = \(name) ORDER BY user_id LIMIT 1",
                logger: logger)
            var next: String?
            for try await user in rows.decode(String.self) { next = user }
            guard let user = next else { return count }
            guard try await assign(user: user) != name else {
                throw NodeDirectoryError("\(name) was made available again: the drain stopped after \(count) user(s)")
            }
            count += 1
            moved(count)
            try await Task.sleep(for: pace)
        }
    }

    /// Removes a node with no user assigned; with `force`, one with users too, who are assigned
    /// another node at their next token. Returns how many users were unassigned.
    @discardableResult
    public func remove(_ name: String, force: Bool = false) async throws -> Int {
        let logger = logger
        return try await connection.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "SELECT users FROM defaults_sync_service_nodes WHERE name = \(name) FOR UPDATE", logger: logger)
            var users: Int?
            for try await count in rows.decode(Int32.self) { users = Int(count) }
            guard let users else { throw NodeDirectoryError("no node is named \(name)") }
            guard users == 0 || force else {
                throw NodeDirectoryError(
                    "\(name) holds \(users) user(s): drain it first (nodes drain \(name)), or remove it with --force")
            }
            try await connection.query(
                "DELETE FROM defaults_sync_service_assignments WHERE node = \(name)", logger: logger)
            try await connection.query("DELETE FROM defaults_sync_service_nodes WHERE name = \(name)", logger: logger)
            return users
        }
    }

    // MARK: The SQL, shared with the instances

    /// The SQLSTATE `defaults_sync_service_assign` raises when no node has room.
    static let noRoomState = "DSN01"

    /// Every node, by name.
    static func nodes(on connection: PostgresConnection, logger: Logger) async throws -> [StorageNode] {
        let rows = try await connection.query(
            "SELECT name, reference, capacity, users, state FROM defaults_sync_service_nodes ORDER BY name",
            logger: logger)
        var nodes: [StorageNode] = []
        for try await (name, reference, capacity, users, state) in rows.decode(
            (String, String, Int32, Int32, String).self)
        {
            // A row another role wrote by hand is read as strictly as `nodes add` writes one.
            guard let reference = try? StorageNode.Reference(reference), let state = StorageNode.State(rawValue: state)
            else {
                logger.warning("the directory's node \(name.debugDescription) has an unreadable reference or state")
                continue
            }
            nodes.append(
                StorageNode(name: name, reference: reference, capacity: Int(capacity), users: Int(users), state: state))
        }
        return nodes
    }

    /// The state of node `name` (`nil` when the directory has none of that name) and the node
    /// `user` is assigned to, if any: what a device's admission on `name` depends on, in one query.
    static func placement(
        of user: String, on name: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (StorageNode.State?, String?) {
        let rows = try await connection.query(
            """
            SELECT (SELECT state FROM defaults_sync_service_nodes WHERE name = \(name)),
                (SELECT node FROM defaults_sync_service_assignments WHERE user_id = \(user))
            """, logger: logger)
        for try await (state, node) in rows.decode((String?, String?).self) {
            return (state.flatMap(StorageNode.State.init(rawValue:)), node)
        }
        return (nil, nil)
    }

    /// The node `user` is assigned to, if any.
    static func assignment(of user: String, on connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query(
            "SELECT node FROM defaults_sync_service_assignments WHERE user_id = \(user)", logger: logger)
        for try await node in rows.decode(String.self) { return node }
        return nil
    }

    /// The node each of `users` is assigned to; those assigned none are left out.
    static func assignments(
        of users: [String], on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: String] {
        let rows = try await connection.query(
            "SELECT user_id, node FROM defaults_sync_service_assignments WHERE user_id = ANY(\(users))",
            logger: logger)
        var nodes: [String: String] = [:]
        for try await (user, node) in rows.decode((String, String).self) { nodes[user] = node }
        return nodes
    }

    /// The users assigned within the last ``movesWindow`` seconds, with their node: an instance
    /// reading them each second closes their devices on any other node, whichever order the moves
    /// committed in.
    static func recentMoves(on connection: PostgresConnection, logger: Logger) async throws -> [(String, String)] {
        let rows = try await connection.query(
            """
            SELECT user_id, node FROM defaults_sync_service_assignments
            WHERE assigned_at > clock_timestamp() - make_interval(secs => \(Self.movesWindow))
            """, logger: logger)
        var moves: [(String, String)] = []
        for try await move in rows.decode((String, String).self) { moves.append(move) }
        return moves
    }

    /// How far back, in seconds, an instance reads the moves.
    static let movesWindow = 15

    /// The directory's tables and the assignment's function: migration 3 of the service's schema.
    static let migration = [
        """
        CREATE TABLE defaults_sync_service_nodes (
            name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
            reference text NOT NULL,
            capacity integer NOT NULL CHECK (capacity > 0),
            users integer NOT NULL DEFAULT 0 CHECK (users >= 0),
            state text NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'draining', 'down')),
            added_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE defaults_sync_service_assignments (
            user_id text PRIMARY KEY,
            node text NOT NULL REFERENCES defaults_sync_service_nodes (name),
            assigned_at timestamptz NOT NULL DEFAULT clock_timestamp()
        )
        """,
        "CREATE INDEX defaults_sync_service_assignments_node ON defaults_sync_service_assignments (node, user_id)",
        "CREATE INDEX defaults_sync_service_assignments_time ON defaults_sync_service_assignments (assigned_at)",
        // The one rule of assignment: the node a user has while it is available; else the
        // available node with the lowest share of its capacity taken, under a lock so that two
        // first tokens never both take a node's last room; the counts move in the same
        // transaction.
        """
        CREATE FUNCTION defaults_sync_service_assign(wanted text) RETURNS text
        LANGUAGE plpgsql AS $$
        DECLARE
            kept text;
            chosen text;
        BEGIN
            SELECT a.node INTO kept FROM defaults_sync_service_assignments a
                JOIN defaults_sync_service_nodes n ON n.name = a.node
                WHERE a.user_id = wanted AND n.state = 'available';
            IF kept IS NOT NULL THEN
                RETURN kept;
            END IF;
            PERFORM pg_advisory_xact_lock(hashtext('defaults_sync_service_assign'));
            SELECT a.node INTO kept FROM defaults_sync_service_assignments a
                JOIN defaults_sync_service_nodes n ON n.name = a.node
                WHERE a.user_id = wanted AND n.state = 'available';
            IF kept IS NOT NULL THEN
                RETURN kept;
            END IF;
            SELECT name INTO chosen FROM defaults_sync_service_nodes
                WHERE state = 'available' AND users < capacity
                ORDER BY users::float8 / capacity, name LIMIT 1;
            IF chosen IS NULL THEN
                RAISE EXCEPTION 'no node is available with room for another user' USING ERRCODE = 'DSN01';
            END IF;
            UPDATE defaults_sync_service_nodes SET users = users - 1
                WHERE name = (SELECT node FROM defaults_sync_service_assignments WHERE user_id = wanted);
            INSERT INTO defaults_sync_service_assignments (user_id, node, assigned_at)
                VALUES (wanted, chosen, clock_timestamp())
                ON CONFLICT (user_id) DO UPDATE SET node = EXCLUDED.node, assigned_at = EXCLUDED.assigned_at;
            UPDATE defaults_sync_service_nodes SET users = users + 1 WHERE name = chosen;
            RETURN chosen;
        END
        $$
        """,
    ]
}
