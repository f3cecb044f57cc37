import DefaultsSyncSQL
import PostgresNIO

extension PostgresSyncStore {
    /// Runs `operation` on `connection`, or throws when the server has not answered within
    /// ``responseTimeout``; the connection is then closed, so that the listen ends and ``run(reporting:)``
    /// reconnects.
    ///
    /// Every call on a connection goes through here. A server that stops answering (frozen, or
    /// gone without closing the socket) would otherwise hold the call forever; and PostgresNIO
    /// (1.33) never completes a query written to a connection that has just closed.
    func answer<Value: Sendable>(
        from connection: PostgresConnection,
        _ what: String,
        describingFailure: Bool = false,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        do {
            return try await Deadline.run(responseTimeout, operation)
        } catch let timeout as Deadline.Passed {
            try? await connection.close()
            throw PostgresSyncError("\(endpoint): no answer \(what) within \(timeout.limit); reconnecting")
        } catch let error where describingFailure {
            // PostgresNIO's own description is generic: the caller's status shows this one.
            throw PostgresSyncError(error, endpoint: endpoint)
        }
    }

    /// Connects to the first of ``servers`` that takes the session (``PostgresServers``), or
    /// throws when the connection, its log-in and that check have not finished within
    /// ``responseTimeout`` for one server (the TCP connect alone has PostgresNIO's own timeout).
    /// A connection that completes after that is closed.
    func connect() async throws -> PostgresConnection {
        let (logger, limit) = (logger, responseTimeout)
        let id = Self.connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue
        do {
            let servers = servers
            return try await servers.connect { configuration in
                try await Deadline.run(
                    limit, { try await servers.open(configuration, id: id, logger: logger) },
                    discardingLate: { try? await $0?.close() })
            }.connection
        } catch let timeout as Deadline.Passed {
            throw PostgresSyncError("\(endpoint): no answer while connecting within \(timeout.limit)")
        }
    }

    /// Until the listen ends, asks the server a trivial question every ``livenessCheckInterval``;
    /// throws once it has not answered within ``responseTimeout`` (the connection is then closed,
    /// which ends the listen). A lost connection is not always reported: a server machine that
    /// vanishes leaves the socket open, with nothing more to read.
    func checkLiveness(of connection: PostgresConnection) async throws {
        let logger = logger
        while true {
            try await Task.sleep(for: livenessCheckInterval)
            try await answer(from: connection, "to a liveness check") {
                for try await _ in try await connection.query("SELECT 1", logger: logger) {}
            }
        }
    }
}
