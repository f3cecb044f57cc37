import DefaultsSyncProtocol
import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// One device's connection: answers its messages in order, for the one owner its token names,
/// and forwards the fan-out's changes through the device's bounded ``DeviceOutbox``.
struct DeviceSession {
    let claims: TokenClaims
    /// Seconds since 1970 from which the token is refused (`exp` and the leeway): then the
    /// connection is closed, whether the device sends anything or not.
    let tokenRefusedFrom: Int64
    let storage: ServiceStorage
    let fanout: ChangeFanout
    let limits: ServiceLimits
    let outboxBounds: DeviceOutbox.Bounds
    /// The user's reads, admitted at a bounded rate of bytes of their answers.
    let reads: BytesBudget
    /// The user's pushes, admitted at a bounded rate of bytes of what they fan out.
    let pushes: BytesBudget
    /// The devices closed as slow consumers lately, asked to wait before they connect again.
    let reconnections: ReconnectionAdmission
    let metrics: ServerMetrics
    /// The connection, reset when a close frame cannot be written (a peer that reads nothing
    /// never takes one).
    let channel: any Channel
    /// Where the connection comes from, for logs.
    let client: ClientAddress
    let logger: Logger

    /// The most bytes of one WebSocket frame the session writes: a longer message goes out in
    /// fragments, so that NIO holds at most about this much of it and the rest stays counted in
    /// the outbox.
    static let fragmentBytes = 64 * 1024
    /// The socket's send buffer, fixed (Linux doubles it for its own bookkeeping): without it, the
    /// kernel's autotuning lets a peer that reads nothing park up to 4 MB there per connection, and
    /// the server answers that many more of its requests before the outbox holds any of them.
    static let socketSendBufferBytes = 256 * 1024
    /// How long a close frame may take to be written before the connection is closed without one.
    static let closeFrameTimeout = Duration.seconds(1)

    var owner: Owner { Owner(user: claims.user, namespace: claims.namespace) }

    /// How each part of the session ended.
    private enum Ending: Sendable {
        /// The device closed the connection, or the connection failed.
        case deviceLeft
        /// The device broke the protocol (a message over the limit...): WebSocket closes with the
        /// code this error names.
        case failed(any Error)
        /// The outbox was closed for this reason.
        case closed(SyncCloseReason, detail: String?)
        /// A part that ends only with the others.
        case done
    }

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        _ = try? await channel.setOption(.socketOption(.so_sndbuf), value: Self.socketSendBufferBytes).get()
        let outbox = DeviceOutbox(bounds: outboxBounds)
        metrics.connected()
        defer { metrics.disconnected() }
        // Unless the user holds too many connections or revoked the token (DeviceSession+Admission).
        guard try await join(outbox, inbound: inbound, outbound: outbound) else { return }
        let ending = await withTaskGroup(of: Ending.self) { group in
            group.addTask { await write(outbox, to: outbound) }
            group.addTask { await read(inbound, into: outbox) }
            group.addTask { await watch(outbox) }
            group.addTask {
                guard let (reason, detail) = await outbox.ended() else { return .done }
                return .closed(reason, detail: detail)
            }
            var ending = Ending.done
            for await part in group {
                if case .done = part { continue }
                ending = part
                break
            }
            // Every part ends: the outbox resumes whoever waits on it, cancellation the rest.
            outbox.finish()
            group.cancelAll()
            return ending
        }
        await leave(outbox)
        switch ending {
        case .closed(.slowConsumer, let detail):
            // Asked to wait before it connects again, longer each time it does it again.
            metrics.slowConsumer()
            let wait = reconnections.closedAsSlowConsumer(claims)
            await close(
                outbound, reason: .slowConsumer, text: SyncCloseReason.slowConsumer.text(retryAfter: wait, detail))
        case .closed(let reason, let detail): await close(outbound, reason: reason, text: reason.text(detail))
        case .failed(let error): throw error
        case .deviceLeft, .done: break
        }
    }

    /// Writes what the outbox holds, in order, a fragment at a time, telling it what the
    /// connection took.
    private func write(_ outbox: DeviceOutbox, to outbound: WebSocketOutboundWriter) async -> Ending {
        do {
            while let next = await outbox.next() {
                guard case .message(var rest) = next else { return .done }
                var isFirst = true
                repeat {
                    let count = min(rest.readableBytes, Self.fragmentBytes)
                    let fragment = rest.readSlice(length: count)!
                    try await outbound.write(
                        .custom(
                            .init(fin: rest.readableBytes == 0, opcode: isFirst ? .text : .continuation, data: fragment)
                        ))
                    outbox.taken(count)
                    isFirst = false
                } while rest.readableBytes > 0
            }
            return .done
        } catch {
            return .deviceLeft
        }
    }

    /// Answers the device's messages in order, reading the next only while its outbox has room.
    private func read(_ inbound: WebSocketInboundStream, into outbox: DeviceOutbox) async -> Ending {
        var messages = inbound.messages(maxSize: limits.messageBytes).makeAsyncIterator()
        do {
            // Backpressure: while the device does not take its answers, its next request waits in
            // NIO and then in the kernel, and its connection is not read.
            while await outbox.waitForRoom(), let message = try await messages.next() {
                // Checked on every message too, should a message beat the timer.
                guard secondsLeft > 0 else {
                    closeExpired(outbox)
                    return .done
                }
                // One rate for all of the user's connections to this instance.
                if let wait = fanout.budgets.take(owner.user) {
                    metrics.limited()
                    outbox.reply(
                        ServerMessage(
                            kind: .failure, id: Self.id(of: message),
                            error: ServiceFailure(
                                .rateLimited, "over \(limits.messagesPerSecond) messages a second for the user",
                                retryAfterMilliseconds: Self.milliseconds(wait))))
                    continue
                }
                outbox.reply(await answer(message))
            }
        } catch {
            return .failed(error)
        }
        return outbox.closeReason == nil ? .deviceLeft : .done
    }

    /// Closes the outbox when its connection has taken nothing for the stall bound while something
    /// waited, and when the token expires: a silent device must not go on receiving changes on an
    /// expired token.
    private func watch(_ outbox: DeviceOutbox) async -> Ending {
        let period = min(outboxBounds.stall / 4, .seconds(1))
        var nextTokenCheck = ContinuousClock.now
        while !Task.isCancelled {
            let stalled = outbox.stalled()
            if stalled > outboxBounds.stall {
                outbox.close(
                    .slowConsumer,
                    detail:
                        "the connection took nothing of \(outbox.pendingBytes) bytes for \(stalled.components.seconds) s"
                )
                return .done
            }
            // Once a second is enough for a token's seconds.
            if ContinuousClock.now >= nextTokenCheck {
                guard secondsLeft > 0 else {
                    closeExpired(outbox)
                    return .done
                }
                nextTokenCheck = .now + .seconds(1)
            }
            try? await Task.sleep(for: period)
        }
        return .done
    }

    /// Seconds until the token is refused.
    private var secondsLeft: Double { Double(tokenRefusedFrom) - Date().timeIntervalSince1970 }

    /// Closes with the reason that tells the device to ask for a new token.
    private func closeExpired(_ outbox: DeviceOutbox) {
        outbox.close(.tokenExpired, detail: AccessTokenError.expired.description)
    }

    /// Sends the close frame saying why (`text`, from `reason`), and closes the connection without
    /// one when the peer does not take it in time.
    private func close(_ outbound: WebSocketOutboundWriter, reason: SyncCloseReason, text: String) async {
        let text = Self.closeFrameReason(text)
        logger.notice("closed a connection of \(owner) from \(client): \(escaped(text))")
        let sent = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await outbound.close(reason.closeCode, reason: text)
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: Self.closeFrameTimeout)
                return false
            }
            let sent = await group.next() ?? false
            group.cancelAll()
            return sent
        }
        if !sent {
            // A reset, not an orderly close: the kernel would otherwise keep what waits in the
            // socket's send buffer, and the FIN behind it, for a peer that never reads.
            if let socket = channel as? any SocketOptionProvider {
                try? await socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            try? await channel.close()
        }
    }

    /// `text` cut to what a close frame's reason holds: 123 bytes of UTF-8.
    static func closeFrameReason(_ text: String) -> String {
        var cut = text
        while cut.utf8.count > 123 { cut.removeLast() }
        return cut
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
        let named = (request.records?.count ?? 0) + (request.keys?.count ?? 0)
        guard named <= SyncProtocol.maximumRecordsPerMessage else {
            return ServerMessage(
                kind: .failure, id: request.id,
                error: ServiceFailure(
                    .malformed,
                    "\(named) records or keys in one message; at most \(SyncProtocol.maximumRecordsPerMessage)"))
        }
        let (owner, storage) = (owner, storage)
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
            // The session ended while the request waited: nobody reads the answer.
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
    private static func id(of message: WebSocketMessage) -> Int? {
        guard case .text(let text) = message else { return nil }
        struct Identified: Decodable { var id: Int }
        return try? SyncProtocol.decode(Identified.self, from: text).id
    }
}

extension SyncCloseReason {
    /// The close frame's code: 1008 (policy) for a token, 1013 (try again later) for a device the
    /// server could not keep.
    var closeCode: WebSocketErrorCode {
        switch self {
        case .tokenExpired, .tokenRevoked: .policyViolation
        case .slowConsumer, .tooManyConnections, .tryAgainLater: .unknown(1013)
        }
    }
}
