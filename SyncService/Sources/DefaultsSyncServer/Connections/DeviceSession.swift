import DefaultsSyncProtocol
import Foundation
import HummingbirdWebSocket
import Logging

/// One device's connection: answers its messages in order, for the one owner its token names,
/// and forwards the fan-out's changes.
struct DeviceSession {
    let claims: TokenClaims
    let storage: ServiceStorage
    let fanout: ChangeFanout
    let limits: ServiceLimits
    let metrics: ServerMetrics
    let logger: Logger

    var owner: Owner { Owner(user: claims.user, namespace: claims.namespace) }

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let outbox = DeviceOutbox()
        metrics.connected()
        defer { metrics.disconnected() }
        // Unless the user holds too many connections or revoked the token (DeviceSession+Admission).
        guard try await join(outbox, outbound: outbound) else { return }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in outbox.messages {
                        try await outbound.write(.text(text))
                    }
                }
                defer { group.cancelAll() }
                for try await message in inbound.messages(maxSize: limits.messageBytes) {
                    // The token is checked on every message: one that expires ends the connection.
                    guard Date().timeIntervalSince1970 < Double(claims.expires) else {
                        try await outbound.close(.policyViolation, reason: AccessTokenError.expired.description)
                        break
                    }
                    // One rate for all of the user's connections to this instance.
                    if let wait = fanout.budgets.take(owner.user) {
                        metrics.limited()
                        outbox.send(
                            ServerMessage(
                                kind: .failure, id: Self.id(of: message),
                                error: ServiceFailure(
                                    .rateLimited, "over \(limits.messagesPerSecond) messages a second for the user",
                                    retryAfterMilliseconds: Int(wait.components.seconds * 1000)
                                        + Int(wait.components.attoseconds / 1_000_000_000_000_000))))
                        continue
                    }
                    outbox.send(await answer(message))
                }
            }
        } catch {
            await leave(outbox)
            outbox.finish()
            throw error
        }
        await leave(outbox)
        outbox.finish()
    }

    /// The answer to one message.
    private func answer(_ message: WebSocketMessage) async -> ServerMessage {
        guard case .text(let text) = message, let request = try? SyncProtocol.decode(DeviceMessage.self, from: text)
        else {
            metrics.message("malformed")
            return ServerMessage(
                kind: .failure, id: Self.id(of: message),
                error: ServiceFailure(.malformed, "not a message of the sync protocol (JSON text)"))
        }
        metrics.message(request.kind.rawValue)
        do {
            switch request.kind {
            case .stamps:
                let (stamps, more) = try await storage.stamps(
                    of: owner, afterKey: request.afterKey, limit: request.limit)
                // `more` only to a device that asked for pages: one older than paging got them all.
                return ServerMessage(
                    kind: .reply, id: request.id, stamps: stamps, more: request.limit.map { _ in more })
            case .records:
                return ServerMessage(
                    kind: .reply, id: request.id,
                    records: try await storage.records(of: owner, keys: request.keys ?? []))
            case .changes:
                let (records, more, latest) = try await storage.changes(of: owner, after: request.after ?? 0)
                return ServerMessage(kind: .reply, id: request.id, latest: latest, records: records, more: more)
            case .push:
                let refused = try await storage.push(request.records ?? [], of: owner)
                if !refused.isEmpty {
                    metrics.refused(refused.count)
                    logger.info("refused \(refused.count) record(s) of \(owner)")
                }
                return ServerMessage(kind: .reply, id: request.id, refused: refused.isEmpty ? nil : refused)
            }
        } catch {
            logger.warning("\(request.kind.rawValue) of \(owner) failed: \(String(reflecting: error))")
            return ServerMessage(
                kind: .failure, id: request.id,
                error: ServiceFailure(
                    .unavailable, "the database did not answer; try again", retryAfterMilliseconds: 1000))
        }
    }

    /// The `id` of a message, when it has one, so that even a refusal reaches its caller.
    private static func id(of message: WebSocketMessage) -> Int? {
        guard case .text(let text) = message else { return nil }
        struct Identified: Decodable { var id: Int }
        return try? SyncProtocol.decode(Identified.self, from: text).id
    }
}
