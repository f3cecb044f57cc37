import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Brings each committed change to the devices of its owner connected to this instance, whichever
/// instance the change came through, and closes a user's connections when their tokens are
/// revoked (``Revocation``).
///
/// One connection per instance listens on ``ServiceSchema/channel``; each push announces itself
/// once (``Announcement``), sealed (``AnnouncementSeal``): a notification that does not open is
/// ignored, whoever sent it. The devices of one owner on this instance form a group. An
/// announcement that carries its records, accounts for every number it claims and follows what
/// the group was sent is forwarded as it is; any other fetches the group's changes after the last
/// number it sent, once, and queues them to every device of the group. So a group's position
/// moves only to a number PostgreSQL gave a record. A group's fetches never overlap;
/// announcements arriving meanwhile are folded into one more fetch.
actor ChangeFanout: Service {
    private struct Member {
        var outbox: DeviceOutbox
        /// When the device's token was issued (`iat`), to close it when the user revokes.
        var issuedAt: Int64?
    }

    private struct Group {
        var owner: Owner
        var devices: [Int: Member] = [:]
        /// The last number sent to the group's devices.
        var latest: Int64
        var isFetching = false
        var isStale = false
    }

    private var groups: [String: Group] = [:]
    /// The revocations heard since this instance started, by user (those before are read from
    /// the database as each device connects).
    private var revocations: [String: Revocation] = [:]
    private let storage: ServiceStorage
    /// The database's servers, of which the listener connects to the primary.
    private let servers: PostgresServers
    private let metrics: ServerMetrics
    private let logger: Logger
    /// What each user spends on this instance: connections and their shared rate.
    nonisolated let budgets: UserBudgets
    /// Notifications that did not open since the last warning about them, and when that was.
    private var unopened = 0
    private var unopenedWarned: ContinuousClock.Instant?

    init(
        storage: ServiceStorage, servers: PostgresServers, metrics: ServerMetrics, logger: Logger
    ) {
        self.storage = storage
        self.servers = servers
        self.metrics = metrics
        self.logger = logger
        budgets = UserBudgets(limits: storage.limits)
    }

    /// Adds a device to its owner's group and queues its welcome, which tells the number from
    /// which the group's changes will reach it; `false` (and nothing queued) when its token was
    /// issued before a revocation this instance heard of.
    func join(
        _ device: DeviceOutbox, owner: Owner, issuedAt: Int64?, welcome: (Int64) -> ServerMessage
    ) async throws -> Bool {
        let tag = owner.tag
        if groups[tag] == nil {
            let latest = try await storage.latest(of: owner)
            if groups[tag] == nil {
                groups[tag] = Group(owner: owner, latest: latest)
                // A change committed while the group did not exist was announced to no one.
                Task { await self.refresh(tag) }
            }
        }
        // After the wait: a revocation may have been heard meanwhile.
        if let revocation = revocations[owner.user], revocation.refuses(issuedAt: issuedAt) {
            return false
        }
        device.send(welcome(groups[tag]!.latest))
        groups[tag]!.devices[device.id] = Member(outbox: device, issuedAt: issuedAt)
        return true
    }

    /// How many devices of `owner`'s are connected to this instance: to each, a change is written.
    func deviceCount(of owner: Owner) -> Int {
        groups[owner.tag]?.devices.count ?? 0
    }

    func leave(_ device: DeviceOutbox, owner: Owner) {
        let tag = owner.tag
        groups[tag]?.devices[device.id] = nil
        if groups[tag]?.devices.isEmpty == true, groups[tag]?.isFetching == false {
            groups[tag] = nil
        }
    }

    /// A notification's opened text (an announcement or a revocation), `nil` when it did not open.
    private func notified(_ text: String?) {
        guard let text else {
            ignoreUnopened()
            return
        }
        if let revocation = Revocation(text: text) {
            revoke(revocation)
        } else if let announcement = Announcement(payload: text) {
            announced(announcement)
        }
    }

    /// Counts a notification that did not open, and warns of them at most once a minute.
    private func ignoreUnopened() {
        unopened += 1
        let now = ContinuousClock.now
        if let warned = unopenedWarned, warned.duration(to: now) < .seconds(60) { return }
        logger.warning(
            """
            ignored \(unopened) notification(s) on \(ServiceSchema.channel) not sealed by an instance of the \
            service: another role connects to its database and sends on its channel
            """)
        (unopened, unopenedWarned) = (0, now)
    }

    /// A push's announcement (``Announcement``): forwarded in order, without the database when
    /// nothing is missing before it.
    private func announced(_ announcement: Announcement) {
        guard let group = groups[announcement.tag] else { return }
        switch announcement.delivery(toDevicesAt: group.latest, fetching: group.isFetching) {
        case .alreadySent:
            return
        case .forward(let frame):
            groups[announcement.tag]?.latest = announcement.latest
            send(frame: frame, to: group)
            metrics.broadcast(
                records: Int(announcement.latest - announcement.after), committedAt: announcement.committed)
        case .send(let fresh):
            groups[announcement.tag]?.latest = announcement.latest
            send(ServerMessage(kind: .changed, latest: announcement.latest, records: fresh), to: group)
            metrics.broadcast(records: fresh.count, committedAt: announcement.committed)
        case .fetch:
            Task { await self.refresh(announcement.tag, committedAt: announcement.committed) }
        }
    }

    /// Closes the user's connections whose token the revocation refuses, and remembers it for the
    /// devices still joining.
    private func revoke(_ revocation: Revocation) {
        if let known = revocations[revocation.user], known.before >= revocation.before { return }
        revocations[revocation.user] = revocation
        var closed = 0
        for group in groups.values where group.owner.user == revocation.user {
            for member in group.devices.values where revocation.refuses(issuedAt: member.issuedAt) {
                member.outbox.close(.tokenRevoked, detail: "the user's tokens issued before it were revoked")
                closed += 1
            }
        }
        logger.notice(
            "tokens of user \(revocation.user.debugDescription) issued before \(revocation.before) revoked: closed \(closed) connection(s)"
        )
    }

    /// Closes the devices here of `user`, or every device when `user` is `nil`, with `reason`;
    /// returns how many.
    func closeDevices(of user: String?, _ reason: SyncCloseReason, detail: String) -> Int {
        var closed = 0
        for group in groups.values where user == nil || group.owner.user == user {
            for member in group.devices.values {
                member.outbox.close(reason, detail: detail)
                closed += 1
            }
        }
        return closed
    }

    /// Encodes `message` once, however many devices the group has: they share its buffer.
    private func send(_ message: ServerMessage, to group: Group) {
        guard !group.devices.isEmpty, let frame = DeviceOutbox.frame(of: message) else { return }
        send(frame: frame, to: group)
    }

    private func send(frame: ByteBuffer, to group: Group) {
        for device in group.devices.values {
            device.outbox.send(frame: frame)
        }
    }

    /// Fetches the group's changes after the last number it sent and queues them to its devices.
    /// The position moves only to the last number of the records read.
    private func refresh(_ tag: String, committedAt committed: Int64? = nil) async {
        guard var group = groups[tag] else { return }
        guard !group.isFetching else {
            groups[tag]?.isStale = true
            return
        }
        group.isFetching = true
        groups[tag] = group
        repeat {
            groups[tag]?.isStale = false
            guard let since = groups[tag]?.latest else { return }
            do {
                let (records, more, _) = try await storage.changes(of: group.owner, after: since)
                if let last = records.last?.seq, let current = groups[tag] {
                    groups[tag]?.latest = last
                    send(ServerMessage(kind: .changed, latest: last, records: records), to: current)
                    metrics.broadcast(records: records.count, committedAt: committed)
                }
                if more { groups[tag]?.isStale = true }
            } catch {
                // A user whose requests fill their share of the database waits a little longer.
                if !(error is UserDatabaseShare.Refusal) {
                    logger.warning("could not fetch changes of \(group.owner): \(String(reflecting: error))")
                }
                // Tried again in a second: nothing else would bring this change before the owner's next.
                Task {
                    try? await Task.sleep(for: .seconds(1))
                    await self.refresh(tag, committedAt: committed)
                }
                break
            }
        } while groups[tag]?.isStale == true
        groups[tag]?.isFetching = false
        if groups[tag]?.devices.isEmpty == true {
            groups[tag] = nil
        }
    }

    /// Reads again the revocation of each user with connections here, as a notification would
    /// have told it.
    private func rereadRevocations() async {
        var owners: [String: Owner] = [:]
        for group in groups.values { owners[group.owner.user] = group.owner }
        for owner in owners.values {
            do {
                if let revocation = try await storage.revocation(of: owner) { revoke(revocation) }
            } catch {
                logger.warning(
                    "could not read the revocations of \(owner): \(String(reflecting: error))")
            }
        }
    }

    /// Refreshes every group: after the listener (re)connects, announcements may have been missed.
    private func refreshAll() {
        for tag in groups.keys {
            Task { await self.refresh(tag) }
        }
    }

    // MARK: Listening

    nonisolated func run() async throws {
        // A listener that listened for 10 seconds starts the back-off over.
        await Self.reconnection.run(until: Task.isCancelledOrShuttingDown) { connected in
            // Stopped by closing its connection, not by cancelling the task: a listen cancelled as it
            // begins could wait for notifications for ever (seen: a SIGTERM just after the start
            // left the server running, its listener never finishing).
            let listener = ListenerConnection()
            try await withTaskCancellationHandler {
                try await withGracefulShutdownHandler {
                    try await self.listen(on: listener, connected: connected)
                } onGracefulShutdown: {
                    listener.stop()
                }
            } onCancel: {
                listener.stop()
            }
        } failed: { error in
            await self.lostListener(error)
        }
    }

    /// When the listener connects again after it lost PostgreSQL: at most 2 s apart, so that it
    /// listens on a promoted primary within seconds of a failover.
    private static let reconnection = ReconnectionPolicy(
        delays: .milliseconds(100)...(.seconds(2)), settledAfter: .seconds(10))

    private nonisolated func listen(
        on listener: ListenerConnection, connected: @escaping @Sendable () -> Void
    ) async throws {
        let (connection, server) = try await servers.connect(id: 0, logger: logger)
        defer { Task { try? await connection.close() } }
        // The listener found the primary: the pool's requests go there too.
        storage.pool.follow(server)
        guard listener.adopt(connection) else { return }  // stopped while it connected
        // Within a deadline, and given up at once by a stop, which closes the connection under
        // the query (PostgresNIO then never answers it).
        let seal = try await cancelWhenGracefulShutdown { [storage] in
            try await Deadline.run(DatabasePool.transactionLimit) { try await storage.seal(on: connection) }
        }
        try await connection.listen(on: ServiceSchema.channel) { notifications in
            connected()
            await self.listenerListens()
            await self.refreshAll()
            // A revocation announced while the listener was away reached this instance's
            // connections through no notification.
            await self.rereadRevocations()
            for try await notification in notifications {
                // Opened before the actor: the listener's task spends the microseconds.
                await self.notified(seal.open(notification.payload))
            }
        }
    }

    /// When the listener lost PostgreSQL, while it has not listened again.
    private var listenerLostAt: ContinuousClock.Instant?

    /// Logs the listener's loss once, however many attempts it takes to listen again.
    private func lostListener(_ error: any Error) {
        // The listener is the first to hear of a lost primary, even when no request is under way.
        storage.pool.searchForPrimary()
        guard listenerLostAt == nil else { return }
        listenerLostAt = .now
        logger.warning("the change listener lost PostgreSQL: \(escaped(String(reflecting: error))); retrying")
    }

    /// Logs once that the listener listens again after a loss.
    private func listenerListens() {
        guard let lost = listenerLostAt else { return }
        listenerLostAt = nil
        logger.notice("the change listener listens again, \(lost.duration(to: .now)) after it lost PostgreSQL")
    }

    /// The users with devices connected to this instance.
    var users: Set<String> { Set(groups.values.map(\.owner.user)) }

    /// The devices connected to this instance.
    var deviceCount: Int { groups.values.reduce(0) { $0 + $1.devices.count } }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { isCancelled || isShuttingDownGracefully }
}

/// The change listener's connection, which stopping the listener closes: its listen then ends,
/// however far it got.
private final class ListenerConnection: Sendable {
    private let state = Mutex<(connection: PostgresConnection?, isStopped: Bool)>((nil, false))

    /// Keeps `connection` to close at a stop; `false` when the listener is stopped already.
    func adopt(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.isStopped else { return false }
            state.connection = connection
            return true
        }
    }

    func stop() {
        let connection = state.withLock { state in
            state.isStopped = true
            return state.connection
        }
        if let connection {
            Task { try? await connection.close() }
        }
    }
}
