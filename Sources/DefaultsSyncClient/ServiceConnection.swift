import Defaults
import DefaultsSyncProtocol
import Foundation
import Logging
import NIOHTTP1
import NIOWebSocket
import Synchronization

/// One device's connection to the sync service: a WebSocket that answers calls by id and brings
/// other devices' changes, reconnecting by itself.
final class ServiceConnection: DefaultsSyncStore {
    let description: String
    private let endpoint: ServiceEndpoint
    private let tokens: TokenSource
    private let options: SyncServiceStore.Options
    private let logger: Logger

    private struct Session {
        let outbound: ServiceSocket.Writer
        let limits: ServiceLimits
        /// The events read from this connection, whose bound each call lifts until it is answered.
        let events: BoundedBuffer<SyncEvent>
        var pending: [Int: PendingReply<ServerMessage>] = [:]
    }

    /// The open session; `nil` between connections.
    private let session = Mutex<Session?>(nil)
    private let nextID = Atomic<Int>(0)
    /// The server's number up to which every change of the namespace was reported (or was there
    /// when the device first connected, and so before the library's first catch-up), and the node
    /// whose number it is (``ServerMessage/node``; `nil` in a deployment of one database).
    private let position = Mutex<Position?>(nil)

    private struct Position {
        var seq: Int64
        var node: String?
        /// The node changed at the last welcome: its numbers say nothing of what this device has,
        /// and the library catches up in full.
        var isNew = false
    }

    /// The largest message read from the server (its changes pages and replies are bounded well below).
    private static let maximumMessageBytes = 256 * 1_048_576
    /// Most records in one push.
    private static let pushBatch = SyncProtocol.maximumRecordsPerMessage
    /// Most messages sent and not answered yet, in a push of more than one: what the device holds
    /// in the server's queue and in its own.
    static let pipelinedCalls = 8

    init(
        endpoint: ServiceEndpoint, user: String, namespace: String,
        tokenProvider: @escaping SyncServiceStore.TokenProvider,
        description: String, options: SyncServiceStore.Options
    ) {
        self.endpoint = endpoint
        self.tokens = TokenSource(
            user: user, namespace: namespace, provider: tokenProvider, timeout: options.responseTimeout)
        self.description = description
        self.options = options
        var logger = Logger(label: "swift-defaults.sync-service")
        logger.logLevel = .warning
        self.logger = logger
    }

    // MARK: Connection

    func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        // A connection that stayed up 10 s starts the back-off over, so a token that expired after
        // serving a while is renewed at once.
        let policy = ReconnectionPolicy(delays: options.reconnectDelays, settledAfter: .seconds(10))
        // This attempt's token, once the provider gave it.
        var token: String?
        // The token the server refused last (or closed the connection of, as it expired).
        var refusedToken: String?
        await policy.run(until: Task.isCancelled) { connected in
            token = nil
            // Asked before every connection: after a refusal or an expiry, that is the renewal.
            let fresh = try await tokens.fresh()
            token = fresh
            try await connect(token: fresh, reporting: report, connected: connected)
        } nextWaitAfter: { error in
            await report(.disconnected(error))
            // The server's back-off ("retry after N s") is never cut short.
            if let wait = (error as? SyncServiceError)?.retryAfter {
                return .atLeast(wait)
            }
            // Refused tokens back off as any failure does, and the very token refused last, given
            // again, waits longest: only a new one helps.
            guard case SyncServiceError.unauthorized = error, let token else { return .backOff }
            defer { refusedToken = token }
            return token == refusedToken ? .longest : .backOff
        }
    }

    /// Connects and reads until the connection ends; then throws why. Calls `connected` when the
    /// server welcomes the device, as it reports ``SyncEvent/connected``.
    private func connect(
        token: String, reporting report: @escaping @Sendable (SyncEvent) async -> Void,
        connected: @escaping @Sendable () -> Void
    ) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(token)")
        let tls = endpoint.usesTLS ? options.tlsConfiguration ?? .makeClientConfiguration() : nil
        // Events reach the library in order from a task of their own: the library's answer to one
        // calls the store, whose replies this connection's reader must go on reading meanwhile.
        // Bounded: while the library is behind and no call awaits an answer, the reader waits, and
        // so reads no more (nor the pongs to its pings: held past the ping interval, the connection
        // is closed, and made again once the library takes what is held; nothing is lost, as the
        // position moves only past events handed on).
        let events = BoundedBuffer<SyncEvent>(capacity: Self.bufferedEvents)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                while let event = await events.next() {
                    await report(event)
                }
            }
            let close: ServiceSocket.CloseFrame?
            do {
                close = try await ServiceSocket.connect(
                    to: endpoint, headers: headers, tls: tls, maxMessageBytes: Self.maximumMessageBytes,
                    upgradeTimeout: options.responseTimeout, pingInterval: options.pingInterval, logger: logger
                ) { text, outbound in
                    guard let decoded = try? SyncProtocol.decode(ServerMessage.self, from: text) else {
                        self.logger.warning("The sync service sent a message this client does not understand")
                        return
                    }
                    await self.handle(decoded, outbound: outbound, events: events, connected: connected)
                }
            } catch {
                ended(because: error)
                events.finish()
                // What was read reaches the library before the failure is reported.
                try? await group.waitForAll()
                throw error
            }
            ended(because: SyncServiceError.closed(code: nil, reason: nil))
            events.finish()
            try await group.waitForAll()
            throw why(close)
        }
    }

    /// The most events read and not yet taken by the library while no call awaits an answer: each
    /// is at most one message of the server's, of at most ``SyncProtocol/maximumRecordsPerMessage``
    /// records. While one does, the reader reads on to the answer, and holds what the server sent
    /// ahead of it (within the server's bound of what it queues for a device).
    static let bufferedEvents = 16

    /// Why the server closed the connection: a token to renew, or a connection to make again.
    private func why(_ close: ServiceSocket.CloseFrame?) -> SyncServiceError {
        let closed = SyncServiceError.closed(code: close.map { "\($0.code)" }, reason: close?.reason)
        switch SyncCloseReason(closeReason: close?.reason) {
        case .tokenExpired, .tokenRevoked, .moved:
            // A moved user's new token names the node that holds their settings now.
            return .unauthorized(reason: close?.reason ?? "no reason given")
        case .slowConsumer, .tooManyConnections, .tryAgainLater:
            // The server's side of a device that reads too slowly, or of too many devices: worth
            // an operator's look, which a reconnection would otherwise hide.
            logger.warning("\(closed); reconnecting", metadata: ["store": "\(description)"])
            return closed
        case nil:
            guard let close, close.code == .policyViolation else { return closed }
            return .unauthorized(reason: close.reason ?? "no reason given")
        }
    }

    /// Handles one message of the server's; waits while the library has ``bufferedEvents`` events
    /// not taken yet and no call awaits an answer.
    private func handle(
        _ message: ServerMessage, outbound: ServiceSocket.Writer, events: BoundedBuffer<SyncEvent>,
        connected: @Sendable () -> Void
    ) async {
        switch message.kind {
        case .welcome:
            session.withLock {
                $0 = Session(outbound: outbound, limits: message.limits ?? .standard, events: events)
            }
            // Listening already: what commits after `latest` reaches this device.
            position.withLock { position in
                // First connected, or the user's settings moved to another node.
                if position == nil || position?.node != message.node {
                    position = Position(seq: message.latest ?? 0, node: message.node, isNew: position != nil)
                }
            }
            guard await events.send(.connected) else { return }
            connected()
        case .reply, .failure:
            guard let id = message.id, let reply = session.withLock({ $0?.pending.removeValue(forKey: id) }) else {
                return
            }
            reply.resolve(.success(message))
        case .changed:
            guard let records = message.records, !records.isEmpty,
                await events.send(.received(records.map(SyncRecord.init)))
            else { return }
            // Only once the library will get them: records not taken are fetched after reconnecting.
            if let last = records.last?.seq {
                raisePosition(to: last)
            }
        }
    }

    /// Fails every call waiting for an answer: the connection that would bring it is gone.
    private func ended(because error: any Error) {
        let pending = session.withLock { session -> [PendingReply<ServerMessage>] in
            defer { session = nil }
            return Array(session?.pending.values ?? [:].values)
        }
        for reply in pending {
            reply.resolve(.failure(SyncServiceError.notConnected))
        }
    }

    /// A message sent and its reply awaited: the session's events' bound stays lifted until
    /// ``finish(_:)`` (the reply comes behind the server's changes, and the library that would make
    /// room may be waiting for this very call, or be behind while another task calls).
    private struct Call {
        let id: Int
        let reply: PendingReply<ServerMessage>
        let session: Session
    }

    /// Sends `message` (its id set here); its reply is awaited by ``finish(_:)``, which must follow.
    private func start(_ message: DeviceMessage) async throws -> Call {
        var message = message
        message.id = nextID.add(1, ordering: .relaxed).newValue
        let id = message.id
        let reply = PendingReply<ServerMessage>()
        guard
            let current = session.withLock({ session -> Session? in
                session?.pending[id] = reply
                return session
            })
        else { throw SyncServiceError.notConnected }
        current.events.liftBound()
        let call = Call(id: id, reply: reply, session: current)
        do {
            try await current.outbound.send(try SyncProtocol.encode(message))
        } catch {
            abandon(call)
            throw error
        }
        return call
    }

    /// The reply to `call`; throws for a failure reply, and closes a connection whose server says
    /// nothing for the response timeout from now (for calls sent together, the server answers one
    /// after another: each has its own time from the reply before it).
    private func finish(_ call: Call) async throws -> ServerMessage {
        defer { abandon(call) }
        let timeout = options.responseTimeout
        let answer = try await withThrowingTaskGroup(of: ServerMessage.self) { group in
            group.addTask { try await call.reply.value() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw SyncServiceError.timedOut(seconds: timeout.components.seconds)
            }
            defer { group.cancelAll() }
            do {
                return try await group.next()!
            } catch let error as SyncServiceError {
                if case .timedOut = error {
                    // A server that stops answering: reconnect rather than wait on it.
                    call.session.outbound.close(.goingAway, reason: "no answer")
                }
                throw error
            }
        }
        if answer.kind == .failure {
            throw ServiceCallFailure(failure: answer.error ?? ServiceFailure(.unavailable, "no reason given"))
        }
        return answer
    }

    /// Ends `call`'s claim on the session: its bound lift, its place among the replies awaited.
    private func abandon(_ call: Call) {
        session.withLock { _ = $0?.pending.removeValue(forKey: call.id) }
        call.session.events.restoreBound()
    }

    /// Sends `message` and returns the server's reply (``start(_:)``, then ``finish(_:)``).
    private func call(_ message: DeviceMessage) async throws -> ServerMessage {
        try await finish(try await start(message))
    }

    /// ``call(_:)``, waiting and trying again while the server says to slow down, within the
    /// response timeout.
    private func callPatiently(_ message: DeviceMessage) async throws -> ServerMessage {
        let deadline = ContinuousClock.now + options.responseTimeout
        while true {
            do {
                return try await call(message)
            } catch let error as ServiceCallFailure {
                try await waitIfSlowedDown(error, before: deadline)
            }
        }
    }

    /// `messages` sent without waiting for replies, at most ``pipelinedCalls`` at a time, and their
    /// replies, in order: one round trip however many there are (the server answers a device's
    /// messages in order). One the server asks to slow down is sent again, patiently, after the
    /// others' replies.
    private func callPipelined(_ messages: [DeviceMessage]) async throws -> [ServerMessage] {
        var inFlight: [Call] = []
        // Calls not finished (a failure midway) give back what they hold.
        defer { for call in inFlight { abandon(call) } }
        var answers: [ServerMessage] = []
        var slowedDown: [Int] = []
        var sent = 0
        for index in messages.indices {
            while sent < messages.count, inFlight.count < Self.pipelinedCalls {
                inFlight.append(try await start(messages[sent]))
                sent += 1
            }
            let call = inFlight.removeFirst()
            do {
                answers.append(try await finish(call))
            } catch let error as ServiceCallFailure where error.failure.code == .rateLimited {
                slowedDown.append(index)
                answers.append(ServerMessage(kind: .failure, id: call.id, error: error.failure))
            } catch let error as ServiceCallFailure {
                throw SyncServiceError.failed(error.failure.description)
            }
        }
        for index in slowedDown { answers[index] = try await callPatiently(messages[index]) }
        return answers
    }

    /// Waits the time a failure asks for when it is the server's "slow down" and that time ends
    /// before `deadline`; throws it as ``SyncServiceError/failed(_:)`` otherwise.
    private func waitIfSlowedDown(_ error: ServiceCallFailure, before deadline: ContinuousClock.Instant) async throws {
        guard error.failure.code == .rateLimited else { throw SyncServiceError.failed(error.failure.description) }
        let wait = Duration.milliseconds(max(10, error.failure.retryAfterMilliseconds ?? 100))
        guard ContinuousClock.now + wait < deadline else { throw SyncServiceError.failed(error.failure.description) }
        try await Task.sleep(for: wait)
    }

    private func raisePosition(to seq: Int64) {
        position.withLock { position in
            if position != nil { position!.seq = max(position!.seq, seq) }
        }
    }

    // MARK: Records

    /// Every key's version, a page at a time: a namespace's can be more than one message should
    /// hold. A server older than paging answers with all of them at once, and no `more`.
    func timestamps() async throws -> [String: SyncTimestamp] {
        var timestamps: [String: SyncTimestamp] = [:]
        var afterKey: String?
        while true {
            let reply = try await callPatiently(
                DeviceMessage(id: 0, kind: .stamps, afterKey: afterKey, limit: Self.stampsPageSize))
            let stamps = reply.stamps ?? []
            for stamp in stamps {
                timestamps[stamp.key] = SyncTimestamp(stamp)
            }
            // A page that does not move on (in the server's byte order) ends the walk, whatever
            // `more` says: a server cannot keep a device paging forever.
            guard reply.more == true, let last = stamps.last?.key,
                afterKey.map({ $0.utf8.lexicographicallyPrecedes(last.utf8) }) ?? true
            else { break }
            afterKey = last
        }
        // The library catches up in full with this node now: its numbers hold from here on.
        position.withLock { $0?.isNew = false }
        return timestamps
    }

    /// The most stamps asked for in one message.
    static let stampsPageSize = 500

    func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        var records: [SyncRecord] = []
        for start in stride(from: 0, to: keys.count, by: Self.pushBatch) {
            let batch = Array(keys[start..<min(start + Self.pushBatch, keys.count)])
            let reply = try await callPatiently(DeviceMessage(id: 0, kind: .records, keys: batch))
            records += (reply.records ?? []).map(SyncRecord.init)
        }
        return records
    }

    func changesSinceLastConnection() async throws -> [SyncRecord]? {
        // Another node's numbers: the library catches up in full, and sends what it holds; until
        // a full walk of the stamps ends (``timestamps()``), every reconnection says so again.
        guard let known = position.withLock({ $0 }), !known.isNew else { return nil }
        let since = known.seq
        var changes: [SyncRecord] = []
        var after = since
        while true {
            let reply = try await callPatiently(DeviceMessage(id: 0, kind: .changes, after: after))
            if let latest = reply.latest, latest < since {
                // The numbers went back: a new or restored database. The library catches up in full.
                position.withLock { $0?.seq = latest }
                return nil
            }
            let page = reply.records ?? []
            changes += page.map(SyncRecord.init)
            if let last = page.last?.seq {
                after = last
                raisePosition(to: last)
            }
            guard reply.more == true, !page.isEmpty else { return changes }
        }
    }

    func push(_ records: [SyncRecord]) async throws {
        let limit = session.withLock { $0?.limits.messageBytes } ?? ServiceLimits.standard.messageBytes
        var refused: [String: String] = [:]
        let batches = Self.batches(of: records.map(WireRecord.init), underBytes: limit / 2)
        for reply in try await callPipelined(batches.map { DeviceMessage(id: 0, kind: .push, records: $0) }) {
            refused.merge(reply.refused ?? [:]) { first, _ in first }
        }
        if !refused.isEmpty {
            throw SyncRecordsRefused(refused)
        }
    }

    /// `records` in batches of at most ``pushBatch`` records whose JSON stays under `bytes` (a
    /// record alone over it goes alone: the server refuses it by name, or closes the connection).
    static func batches(of records: [WireRecord], underBytes bytes: Int) -> [[WireRecord]] {
        var batches: [[WireRecord]] = []
        var batch: [WireRecord] = []
        var size = 0
        for record in records {
            // Base64 makes 4 bytes of 3, escapes at most 6 of 1 in the name; 100 for the rest.
            let estimate =
                (record.value?.count ?? 0) * 4 / 3 + record.key.utf8.count * 6 + record.origin.utf8.count + 100
            if !batch.isEmpty, batch.count >= pushBatch || size + estimate > bytes {
                batches.append(batch)
                batch = []
                size = 0
            }
            batch.append(record)
            size += estimate
        }
        if !batch.isEmpty { batches.append(batch) }
        return batches
    }
}

/// A failure reply, before it becomes a ``SyncServiceError``.
struct ServiceCallFailure: Error {
    let failure: ServiceFailure
}
