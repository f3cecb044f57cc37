import DefaultsSyncProtocol
import Foundation
import Logging

/// The service's ``ConnectionBackend``: admission by the user's node, connections, revocations
/// and back-off, answers from the node's ``ServiceStorage`` at the user's rates, and its fan-out's
/// groups.
struct InstanceBackend: ConnectionBackend {
    /// The databases this instance serves; a device's token names its node (``InstanceNodes``).
    let nodes: InstanceNodes
    let limits: ServiceLimits
    /// The user's reads, admitted at a bounded rate of bytes of their answers.
    let reads: BytesBudget
    /// The user's pushes, admitted at a bounded rate of bytes of what they fan out.
    let pushes: BytesBudget
    /// The devices closed as slow consumers lately, asked to wait before they connect again.
    let reconnections: ReconnectionAdmission
    let metrics: ServerMetrics
    let logger: Logger

    /// The longest a refused connection is held before the instance closes it: long enough that a
    /// device ignoring its wait connects a few times a minute, short enough to cost little.
    static let longestHold = Duration.seconds(5)

    /// Admits the device to its owner's group (``ChangeFanout/join(_:owner:issuedAt:welcome:)``),
    /// unless it was closed as a slow consumer lately and its wait is not over
    /// (``ReconnectionAdmission``), its user holds as many connections to this instance as they may
    /// (``ServiceLimits/userConnections``), its user's requests wait for their share of the
    /// database (``UserDatabaseShare``), or the user revoked the tokens issued before its own
    /// (``Revocation``).
    ///
    /// A device refused for coming back before its wait is over is held until it hangs up or the
    /// wait ends (at most ``longestHold``), and only then told its wait: one that ignores the wait
    /// and connects again as soon as it is closed costs the instance a socket, not a connection a
    /// moment. A device that honours the wait is never held, and a user's held connections count
    /// against their connections (``ServiceLimits/userConnections``); past that, it is refused at
    /// once.
    func admit(_ outbox: DeviceOutbox, claims: TokenClaims, client: ClientAddress) async -> Admission {
        let owner = Owner(claims)
        let node: ServiceNode
        do {
            switch try await nodes.serving(claims) {
            case .node(let serving):
                node = serving
            case .moved(let why):
                logger.notice("refused a connection of \(owner) from \(client): \(why)")
                return .refused(.moved, text: SyncCloseReason.moved.text(why + "; ask for a new token"))
            case .unavailable(let why):
                return .refused(.tryAgainLater, text: SyncCloseReason.tryAgainLater.text(retryAfter: .seconds(2), why))
            }
        } catch {
            logger.warning("could not read the node of \(owner): \(escaped(String(reflecting: error)))")
            return .refused(
                .tryAgainLater,
                text: SyncCloseReason.tryAgainLater.text(retryAfter: .seconds(1), "the database did not answer"))
        }
        let (storage, fanout) = (node.storage, node.fanout)
        if let wait = reconnections.refusal(of: claims) {
            metrics.refusedReconnection()
            // Not at notice: a device that ignores the wait comes back many times a second.
            logger.debug("refused a connection of \(owner) from \(client): closed as a slow consumer lately")
            let text = SyncCloseReason.tryAgainLater.text(retryAfter: wait, "closed as a slow consumer lately")
            guard fanout.budgets.admit(owner.user) else { return .refused(.tryAgainLater, text: text) }
            return .refused(.tryAgainLater, text: text, holdFor: min(wait, Self.longestHold))
        }
        guard fanout.budgets.admit(owner.user) else {
            logger.notice("refused a connection of \(owner): the user holds \(limits.userConnections) already")
            return .refused(
                .tooManyConnections,
                text: SyncCloseReason.tooManyConnections.text(
                    "at most \(limits.userConnections) per user on this instance"))
        }
        let limits = limits
        do {
            // Revocations recorded before this instance heard of them are in the database; those
            // it hears of meanwhile, the fan-out checks as the device joins.
            if try await storage.revocation(of: owner)?.refuses(issuedAt: claims.issuedAt) != true,
                try await fanout.join(
                    outbox, owner: owner, issuedAt: claims.issuedAt,
                    welcome: { latest in
                        ServerMessage(kind: .welcome, latest: latest, limits: limits, node: claims.node)
                    })
            {
                return .admitted
            }
        } catch let refusal as UserDatabaseShare.Refusal {
            fanout.budgets.release(owner.user)
            metrics.refusedPastShare()
            return .refused(
                .tryAgainLater,
                text: SyncCloseReason.tryAgainLater.text(retryAfter: UserDatabaseShare.retryAfter, "\(refusal)"))
        } catch {
            fanout.budgets.release(owner.user)
            logger.warning("could not admit a connection of \(owner): \(escaped(String(reflecting: error)))")
            return .refused(
                .tryAgainLater,
                text: SyncCloseReason.tryAgainLater.text(retryAfter: .seconds(1), "the database did not answer"))
        }
        fanout.budgets.release(owner.user)
        logger.notice("refused a connection of \(owner): its token was issued before the user revoked theirs")
        return .refused(.tokenRevoked, text: SyncCloseReason.tokenRevoked.text("the token was issued before it"))
    }

    func endHold(claims: TokenClaims) {
        nodes.node(named: claims.node)?.fanout.budgets.release(claims.user)
    }

    /// Takes the device out of its owner's group and its connection off its user's count (on a
    /// node that left the directory meanwhile, both went with it).
    func leave(_ outbox: DeviceOutbox, claims: TokenClaims) async {
        guard let fanout = nodes.node(named: claims.node)?.fanout else { return }
        await fanout.leave(outbox, owner: Owner(claims))
        fanout.budgets.release(claims.user)
    }

    func closedAsSlowConsumer(_ claims: TokenClaims) -> Duration {
        metrics.slowConsumer()
        return reconnections.closedAsSlowConsumer(claims)
    }

    /// The answer to one message, at one rate for all of the user's connections to this instance.
    func answer(_ text: String?, claims: TokenClaims) async -> ServerMessage {
        let owner = Owner(claims)
        guard let node = nodes.node(named: claims.node) else {
            // Its node left the directory: the device is being closed as moved.
            return ServerMessage(
                kind: .failure, id: text.flatMap(Self.id(of:)),
                error: ServiceFailure(.unavailable, "the user's node is gone", retryAfterMilliseconds: 1000))
        }
        let (storage, fanout) = (node.storage, node.fanout)
        // Every message counts, malformed or not.
        if let wait = fanout.budgets.take(owner.user) {
            metrics.limited()
            return ServerMessage(
                kind: .failure, id: text.flatMap(Self.id(of:)),
                error: ServiceFailure(
                    .rateLimited, "over \(limits.messagesPerSecond) messages a second for the user",
                    retryAfterMilliseconds: Self.milliseconds(wait)))
        }
        guard let text, let request = try? SyncProtocol.decode(DeviceMessage.self, from: text) else {
            metrics.message("malformed")
            return ServerMessage(
                kind: .failure, id: text.flatMap(Self.id(of:)),
                error: ServiceFailure(.malformed, "not a message of the sync protocol (JSON text)"))
        }
        metrics.message(request.kind.rawValue)
        let named = (request.records?.count ?? 0) + (request.keys?.count ?? 0)
        guard named <= SyncProtocol.maximumRecordsPerMessage else {
            return ServerMessage(
                kind: .failure, id: request.id,
                error: ServiceFailure(
                    .malformed,
                    "\(named) records or keys in one message; at most \(SyncProtocol.maximumRecordsPerMessage)"))
        }
        do {
            switch request.kind {
            case .stamps:
                let (stamps, more) = try await reads.withAdmission(of: owner.user) {
                    try await storage.stamps(of: owner, afterKey: request.afterKey, limit: request.limit)
                } cost: {
                    BytesBudget.cost(of: $0.stamps)
                }
                // `more` only to a device that asked for pages: one older than paging got them all.
                return ServerMessage(
                    kind: .reply, id: request.id, stamps: stamps, more: request.limit.map { _ in more })
            case .records:
                let records = try await reads.withAdmission(of: owner.user) {
                    try await storage.records(of: owner, keys: request.keys ?? [])
                } cost: {
                    BytesBudget.cost(of: $0)
                }
                return ServerMessage(kind: .reply, id: request.id, records: records)
            case .changes:
                let (records, more, latest) = try await reads.withAdmission(of: owner.user) {
                    try await storage.changes(of: owner, after: request.after ?? 0)
                } cost: {
                    BytesBudget.cost(of: $0.records)
                }
                return ServerMessage(kind: .reply, id: request.id, latest: latest, records: records, more: more)
            case .push:
                let records = request.records ?? []
                // What it costs the instance: the records stored, written to each of the owner's
                // devices here (the pusher's too).
                let devices = max(1, await fanout.deviceCount(of: owner))
                let refused = try await pushes.withAdmission(of: owner.user) {
                    try await storage.push(records, of: owner)
                } cost: { refused in
                    BytesBudget.cost(of: records.filter { refused[$0.key] == nil }) * devices
                }
                if !refused.isEmpty {
                    metrics.refused(refused.count)
                    logger.info("refused \(refused.count) record(s) of \(owner)")
                }
                return ServerMessage(kind: .reply, id: request.id, refused: refused.isEmpty ? nil : refused)
            }
        } catch let refusal as UserDatabaseShare.Refusal {
            metrics.refusedPastShare()
            return ServerMessage(
                kind: .failure, id: request.id,
                error: ServiceFailure(
                    .rateLimited, "\(refusal); try again",
                    retryAfterMilliseconds: Self.milliseconds(UserDatabaseShare.retryAfter)))
        } catch is CancellationError {
            // The connection ended while the request waited: nobody reads the answer.
            return ServerMessage(kind: .failure, id: request.id, error: ServiceFailure(.unavailable, "cancelled"))
        } catch {
            logger.warning("\(request.kind.rawValue) of \(owner) failed: \(escaped(String(reflecting: error)))")
            return ServerMessage(
                kind: .failure, id: request.id,
                error: ServiceFailure(
                    .unavailable, "the database did not answer; try again", retryAfterMilliseconds: 1000))
        }
    }

    /// `duration` in whole milliseconds, rounded down, as a failure's `retryAfterMilliseconds`.
    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000) + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The `id` of a message, when it has one, so that even a refusal reaches its caller.
    private static func id(of text: String) -> Int? {
        struct Identified: Decodable { var id: Int }
        return try? SyncProtocol.decode(Identified.self, from: text).id
    }
}

extension Owner {
    init(_ claims: TokenClaims) {
        self.init(user: claims.user, namespace: claims.namespace)
    }
}
