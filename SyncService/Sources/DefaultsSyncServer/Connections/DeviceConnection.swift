import DefaultsSyncProtocol
import Foundation
import Logging
import NIOCore
import NIOWebSocket

/// One device's WebSocket, after the upgrade: a channel handler on the connection's event loop,
/// whose state is a value the loop's events drive. Nothing runs for an idle connection: a request
/// is a task only while its answer is awaited, and pings, the token's expiry, a stalled outbox and
/// the close handshake are deadlines on the loop's ``TimerWheel``.
///
/// It answers the device's messages in order, one at a time, for the one owner its token names,
/// reading the next only while the device's ``DeviceOutbox`` has room (backpressure: a device that
/// asks and never reads is not read from either), and writes what the outbox holds (answers and
/// the fan-out's changes) a fragment at a time while the socket takes it. It closes the connection
/// with a close frame saying why (``SyncCloseReason``), and resets it when the peer does not take
/// that frame in time.
final class DeviceConnection: ChannelDuplexHandler, TimerWheelClient {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// What the upgrade found in the request's token.
    enum Credentials: Sendable {
        /// A verified token, refused from `refusedFrom` (seconds since 1970: `exp` and the leeway).
        case verified(TokenClaims, refusedFrom: Int64)
        /// A refused token (`token` is what came, if anything, for the log).
        case refused(AccessTokenError, token: String?)
    }

    /// What every connection of an instance shares.
    struct Settings: Sendable {
        var outboxBounds: DeviceOutbox.Bounds
        /// How often an open connection is pinged; one that has not answered the last ping by
        /// the next is closed.
        var pingInterval: TimeAmount
        /// The most bytes of one WebSocket frame written: a longer message goes out in fragments,
        /// so that NIO holds at most about this much of it and the rest stays counted in the outbox.
        var fragmentBytes = 64 * 1024
        /// How long a close frame may take to be written before the connection is reset.
        var closeFrameTimeout = TimeAmount.seconds(1)
        /// The same for a refused connection: one closed before it finished setting up loses the
        /// close frame that says why (NIO's client upgrade lets the close through before the
        /// WebSocket is in place), and a refused device costs nothing meanwhile.
        var refusalCloseTimeout = TimeAmount.seconds(5)
        /// How long a refused connection waits before its close frame: one that arrives with the
        /// upgrade's response can be missed by a client still setting up (seen with WSClient on a
        /// busy machine).
        var refusalDelay = TimeAmount.milliseconds(100)
        /// How long the instance may take to admit a device before it is told to try again later.
        var admissionTimeout = TimeAmount.seconds(30)
        /// The most messages read and not yet answered: one read of the socket can bring tens of
        /// thousands of tiny ones.
        var inboxMessages = 1024
    }

    private enum Phase {
        /// Waiting for the instance to admit the device.
        case admitting
        /// Closes with this frame at `until`; `held` when the instance counts the connection as
        /// its user's meanwhile (``Admission/refused(_:text:holdFor:)``).
        case refusing(until: NIODeadline, code: WebSocketErrorCode, text: String, held: Bool)
        case open
        /// A close frame went out (`written` once the socket took it); the peer's answer or the
        /// deadline ends the connection.
        case closing(until: NIODeadline, written: Bool)
        case closed
    }

    private let credentials: Credentials
    private let client: ClientAddress
    private let backend: any ConnectionBackend
    private let settings: Settings
    private let wheel: TimerWheel
    private let metrics: ServerMetrics
    private let logger: Logger

    private var context: ChannelHandlerContext?
    private var phase = Phase.admitting
    private var outbox: DeviceOutbox?
    private var isAdmitted = false
    /// Messages read and not yet answered (at most what one read of the socket brings: nothing
    /// more is read while any wait).
    private var inbox: [WebSocketFrame] = []
    private var isAnswering = false
    /// A read NIO asked for while the connection could not take more.
    private var readIsHeld = false
    /// The message being written, and whether its first fragment went out.
    private var writing: (rest: ByteBuffer, isFirst: Bool)?
    /// When the token is refused, on the loop's clock.
    private var tokenDeadline = NIODeadline.distantFuture
    private var nextPing = NIODeadline.distantFuture
    private var awaitsPong = false
    /// Since when bytes have waited in the outbox with none taken (checked at each deadline).
    private var waitingSince: NIODeadline?
    private var isQuiescing = false
    /// The pong owed for the last ping, while the socket takes nothing (older ones are not owed).
    private var owedPong: ByteBuffer?
    /// The instance's work for this connection, cancelled when it ends: its admission, or the
    /// answer to its current message.
    private var work: Task<Void, Never>?
    private var admissionDeadline = NIODeadline.distantFuture
    /// The connection's turn at its loop's ``ArrivalGate``, released once its admission ends.
    private var arrival: ArrivalGate.Pass?
    /// The deadline the wheel holds for the connection, if any.
    private var scheduledAt: NIODeadline?
    var wheelMark = 0

    init(
        credentials: Credentials, arrival: ArrivalGate.Pass? = nil, client: ClientAddress,
        backend: any ConnectionBackend, settings: Settings, wheel: TimerWheel, metrics: ServerMetrics, logger: Logger
    ) {
        self.credentials = credentials
        self.arrival = arrival
        self.client = client
        self.backend = backend
        self.settings = settings
        self.wheel = wheel
        self.metrics = metrics
        self.logger = logger
    }

    private var owner: Owner? {
        guard case .verified(let claims, _) = credentials else { return nil }
        return Owner(claims)
    }

    // MARK: Events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let now = context.eventLoop.now
        switch credentials {
        case .refused(let error, let token):
            endArrival()
            metrics.refusedToken()
            logger.notice(
                "refused a connection from \(client), \(ClaimedIdentity(token: token)): \(escaped(error.description))")
            refuse(.policyViolation, text: error.description, at: now + settings.refusalDelay, held: false)
        case .verified(let claims, let refusedFrom):
            metrics.connected()
            let seconds = Double(refusedFrom) - Date().timeIntervalSince1970
            tokenDeadline = now + .nanoseconds(Int64(max(0, min(seconds, 1e9)) * 1e9))
            let loop = context.eventLoop
            // The outbox's way back to its connection, which it must not keep alive.
            let target = NIOLoopBound(Weak(self), eventLoop: loop)
            let outbox = DeviceOutbox(bounds: settings.outboxBounds) {
                loop.execute { target.value.object?.writeOutbox() }
            }
            self.outbox = outbox
            let (backend, client) = (backend, client)
            let me = NIOLoopBound(self, eventLoop: loop)
            admissionDeadline = now + settings.admissionTimeout
            work = Task {
                let admission = await backend.admit(outbox, claims: claims, client: client)
                loop.execute { me.value.admitted(admission) }
            }
            scheduleDeadline()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    private func admitted(_ admission: Admission) {
        let cameThroughGate = arrival != nil
        endArrival()
        defer {
            // It read nothing while it waited its turn (`DeviceChannel`); from now on, as
            // `read(context:)` allows.
            if cameThroughGate, let context, context.channel.isActive {
                _ = context.channel.setOption(.autoRead, value: true)
            }
        }
        guard case .admitting = phase, let context else {
            // The connection ended meanwhile.
            undo(admission)
            return
        }
        work = nil
        switch admission {
        case .admitted:
            isAdmitted = true
            phase = .open
            nextPing = context.eventLoop.now + settings.pingInterval
            scheduleDeadline()
            if isQuiescing {
                stop()
                return
            }
            writeOutbox()
            answerNext()
        case .refused(let reason, let text, let hold):
            outbox?.finish()
            let wait = hold.map { TimeAmount($0) } ?? .zero
            refuse(
                reason.closeCode, text: text, at: context.eventLoop.now + max(wait, settings.refusalDelay),
                held: hold != nil)
        }
    }

    /// What the backend did for a connection that ended while it was admitted.
    private func undo(_ admission: Admission) {
        guard case .verified(let claims, _) = credentials, let outbox else { return }
        switch admission {
        case .admitted:
            let backend = backend
            Task { await backend.leave(outbox, claims: claims) }
        case .refused(_, _, let hold):
            if hold != nil { backend.endHold(claims: claims) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            guard frame.fin else { return fail(.protocolError, "a fragmented ping") }
            if case .closed = phase { return }
            // Only the last ping is owed a pong: a device that pings and never reads queues none.
            owedPong = frame.unmaskedData
            payOwedPong()
        case .pong:
            awaitsPong = false
        case .connectionClose:
            peerClosed(frame)
        case .text, .binary:
            switch phase {
            case .admitting, .open:
                guard inbox.count < settings.inboxMessages else {
                    return fail(.policyViolation, "more than \(settings.inboxMessages) messages unanswered")
                }
                inbox.append(frame)
                answerNext()
            case .refusing, .closing, .closed:
                break  // read and dropped
            }
        default:
            break
        }
    }

    /// The device's close frame: the answer to ours, or its own close, which is echoed.
    private func peerClosed(_ frame: WebSocketFrame) {
        guard let context else { return }
        switch phase {
        case .closing, .closed:
            context.close(promise: nil)
        case .admitting, .open, .refusing:
            var data = frame.unmaskedData
            sendClose(data.readWebSocketErrorCode() ?? .normalClosure, text: "", isAnswer: true)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            payOwedPong()
            writeOutbox()
            readIfAllowed()
        } else {
            // The socket takes nothing: from now on, a stall is watched.
            scheduleDeadline()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Writes the pong owed, once the socket takes it.
    private func payOwedPong() {
        guard let context, context.channel.isWritable, let data = owedPong else { return }
        owedPong = nil
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: data)), promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketFrameAggregator.Error {
            if case .accumulatedFrameSizeIsTooLarge = error {
                fail(.messageTooLarge, "a message over the limit")
            } else {
                fail(.protocolError, "\(error)")
            }
        } else {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            isQuiescing = true
            switch phase {
            case .admitting, .open: stop()
            case .refusing, .closing, .closed: break
            }
        } else if case ChannelEvent.inputClosed = event {
            // The device hung up without a close frame (the server allows half-closed connections).
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The server stops (SIGTERM): an orderly close.
    private func stop() {
        sendClose(.normalClosure, text: "the server is stopping")
    }

    // MARK: Reading

    func read(context: ChannelHandlerContext) {
        if canRead {
            context.read()
        } else {
            readIsHeld = true
        }
    }

    /// Whether the device's next bytes may be read: not while it waits to be admitted, nor while a
    /// message waits for its answer or the outbox is past its bound.
    private var canRead: Bool {
        switch phase {
        case .admitting: false
        // Nor while the socket takes nothing: a device that sends and never reads is not read.
        case .open:
            inbox.isEmpty && !isAnswering && outbox?.hasRoom == true && context?.channel.isWritable == true
        case .refusing, .closing, .closed: true
        }
    }

    private func readIfAllowed() {
        guard readIsHeld, canRead, let context else { return }
        readIsHeld = false
        context.read()
    }

    /// Answers the next message, if none is being answered and the outbox has room for the answer.
    private func answerNext() {
        guard case .open = phase, !isAnswering, !inbox.isEmpty, let context, outbox?.hasRoom == true,
            case .verified(let claims, _) = credentials
        else { return }
        // Checked on every message too, should a message beat the deadline.
        guard context.eventLoop.now < tokenDeadline else { return expire() }
        let message = inbox.removeFirst()
        isAnswering = true
        let text = message.opcode == .text ? String(buffer: message.unmaskedData) : nil
        let backend = backend
        let loop = context.eventLoop
        let me = NIOLoopBound(self, eventLoop: loop)
        work = Task {
            let answer = await backend.answer(text, claims: claims)
            let frame = DeviceOutbox.frame(of: answer)
            loop.execute { me.value.answered(frame) }
        }
    }

    private func answered(_ frame: ByteBuffer?) {
        isAnswering = false
        work = nil
        guard case .open = phase else { return }
        if let frame { outbox?.reply(frame: frame) }
        writeOutbox()
        answerNext()
        readIfAllowed()
    }

    // MARK: Writing

    /// Writes what the outbox holds while the socket takes it, and closes when the outbox says so.
    private func writeOutbox() {
        guard let context, let outbox else { return }
        switch phase {
        case .admitting, .open: break
        case .refusing, .closing, .closed: return
        }
        // Closed by the fan-out, a revocation or a deadline, whether the socket takes more or not.
        if let (reason, detail) = outbox.closeReason { return close(reason, detail: detail) }
        var wrote = false
        while context.channel.isWritable {
            if writing == nil {
                switch outbox.take() {
                case .message(let message): writing = (message, true)
                case .close(let reason, let detail):
                    if wrote { context.flush() }
                    return close(reason, detail: detail)
                case nil: break
                }
            }
            guard let (message, isFirst) = writing else { break }
            var rest = message
            let count = min(rest.readableBytes, settings.fragmentBytes)
            let fragment = rest.readSlice(length: count)!
            context.write(
                wrapOutboundOut(
                    WebSocketFrame(
                        fin: rest.readableBytes == 0, opcode: isFirst ? .text : .continuation, data: fragment)),
                promise: nil)
            writing = rest.readableBytes == 0 ? nil : (rest, false)
            outbox.taken(count)
            wrote = true
        }
        if wrote {
            context.flush()
            waitingSince = nil
            answerNext()
            readIfAllowed()
        }
        // Something waits that the socket does not take: its deadline is watched.
        if !context.channel.isWritable || outbox.pendingBytes > 0 { scheduleDeadline() }
    }

    /// Closes for `reason` (the outbox closed).
    private func close(_ reason: SyncCloseReason, detail: String?) {
        guard case .verified(let claims, _) = credentials else { return }
        let text =
            reason == .slowConsumer
            // Asked to wait before it connects again, longer each time it does it again.
            ? reason.text(retryAfter: backend.closedAsSlowConsumer(claims), detail) : reason.text(detail)
        logger.notice("closed a connection of \(owner.map(\.description) ?? "-") from \(client): \(escaped(text))")
        sendClose(reason.closeCode, text: text)
    }

    /// Closes at once for a broken protocol.
    private func fail(_ code: WebSocketErrorCode, _ text: String) {
        sendClose(code, text: text)
    }

    private func refuse(_ code: WebSocketErrorCode, text: String, at deadline: NIODeadline, held: Bool) {
        phase = .refusing(until: deadline, code: code, text: text, held: held)
        scheduleDeadline()
        readIfAllowed()
    }

    /// Sends the close frame (`text` cut to fit), then waits for the peer's for at most
    /// `answerWithin` (``Settings/closeFrameTimeout`` unless given); or, `isAnswer`, echoes the
    /// peer's and closes once it is written.
    private func sendClose(
        _ code: WebSocketErrorCode, text: String, isAnswer: Bool = false, answerWithin: TimeAmount? = nil
    ) {
        guard let context else { return }
        switch phase {
        case .closing, .closed: return
        case .admitting, .open, .refusing: endHold(of: phase)
        }
        outbox?.finish()
        writing = nil
        phase = .closing(until: context.eventLoop.now + (answerWithin ?? settings.closeFrameTimeout), written: false)
        var data = context.channel.allocator.buffer(capacity: 2 + 123)
        data.write(webSocketErrorCode: code)
        data.writeString(Self.closeFrameReason(text))
        let written = context.writeAndFlush(
            wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
        ).assumeIsolated()
        if isAnswer {
            written.whenComplete { _ in context.close(promise: nil) }
        } else {
            written.whenSuccess { [weak self] in
                guard let self, case .closing(let until, _) = self.phase else { return }
                self.phase = .closing(until: until, written: true)
            }
        }
        scheduleDeadline()
        readIfAllowed()
    }

    /// `text` cut to what a close frame's reason holds: 123 bytes of UTF-8.
    static func closeFrameReason(_ text: String) -> String {
        var cut = text
        while cut.utf8.count > 123 { cut.removeLast() }
        return cut
    }

    /// Closes with the reason that tells the device to ask for a new token.
    private func expire() {
        outbox?.close(.tokenExpired, detail: AccessTokenError.expired.description)
    }

    // MARK: Deadlines

    /// Schedules the earliest of the connection's deadlines on the wheel.
    private func scheduleDeadline() {
        guard let context else { return }
        let now = context.eventLoop.now
        let deadline: NIODeadline
        switch phase {
        case .closed:
            scheduledAt = nil
            return wheel.cancel(self)
        case .admitting: deadline = admissionDeadline
        case .refusing(let until, _, _, _), .closing(let until, _): deadline = until
        case .open:
            var earliest = min(nextPing, tokenDeadline)
            if !context.channel.isWritable || (outbox?.pendingBytes ?? 0) > 0 {
                earliest = min(earliest, now + stallCheckPeriod)
            }
            deadline = earliest
        }
        // An earlier deadline held already comes first: this one is scheduled when it comes.
        if let scheduledAt, scheduledAt <= deadline { return }
        scheduledAt = deadline
        wheel.schedule(self, at: deadline)
    }

    /// How often a connection with bytes waiting is checked for a stall.
    private var stallCheckPeriod: TimeAmount {
        let stall = TimeAmount(settings.outboxBounds.stall).nanoseconds
        return .nanoseconds(max(TimerWheel.tick.nanoseconds, min(stall / 4, 1_000_000_000)))
    }

    func deadlineCame(now: NIODeadline) {
        scheduledAt = nil
        guard let context else { return }
        switch phase {
        case .closed:
            return
        case .admitting:
            guard now >= admissionDeadline else { break }
            // The instance did not admit it in time (a database that does not answer): its
            // admission is abandoned, and what it did is undone when it ends.
            work?.cancel()
            return sendClose(
                SyncCloseReason.tryAgainLater.closeCode,
                text: SyncCloseReason.tryAgainLater.text(retryAfter: .seconds(1), "not admitted in time"))
        case .refusing(let until, let code, let text, _):
            guard now >= until else { break }
            return sendClose(code, text: text, answerWithin: settings.refusalCloseTimeout)
        case .closing(let until, let written):
            guard now >= until else { break }
            if !written, let socket = context.channel as? any SocketOptionProvider {
                // A reset, not an orderly close: the kernel would otherwise keep what waits in the
                // socket's send buffer, and the FIN behind it, for a peer that never reads.
                _ = socket.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            }
            context.close(promise: nil)
            return
        case .open:
            if now >= tokenDeadline { return expire() }
            if now >= nextPing {
                guard !awaitsPong else { return fail(.goingAway, "ping timeout") }
                awaitsPong = true
                nextPing = now + settings.pingInterval
                var data = context.channel.allocator.buffer(capacity: 8)
                data.writeInteger(UInt64.random(in: .min ... .max))
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: data)), promise: nil)
            }
            if let outbox, !context.channel.isWritable || outbox.pendingBytes > 0 {
                let since = waitingSince ?? now
                waitingSince = since
                let stalled = Duration.nanoseconds((now - since).nanoseconds)
                if stalled > settings.outboxBounds.stall {
                    return outbox.close(
                        .slowConsumer,
                        detail:
                            "the connection took nothing of \(outbox.pendingBytes) bytes for \(stalled.components.seconds) s"
                    )
                }
            } else {
                waitingSince = nil
            }
        }
        scheduleDeadline()
    }

    // MARK: Ending

    /// Lets go of a refused device held (``Admission/refused(_:text:holdFor:)``) as its
    /// connection leaves `phase`, whichever way it goes.
    private func endHold(of phase: Phase) {
        guard case .refusing(_, _, _, true) = phase, case .verified(let claims, _) = credentials else { return }
        backend.endHold(claims: claims)
    }

    /// Lets the next connection of the loop arrive: this one's admission is over.
    private func endArrival() {
        arrival?.release()
        arrival = nil
    }

    /// The connection ended: the device leaves its group, and what waits for it goes.
    private func end() {
        endArrival()
        if case .closed = phase { return }
        let ended = phase
        phase = .closed
        scheduledAt = nil
        wheel.cancel(self)
        // Work for a device gone is not finished: its database's share goes to the living.
        work?.cancel()
        work = nil
        inbox = []
        owedPong = nil
        writing = nil
        outbox?.finish()
        guard case .verified(let claims, _) = credentials else { return }
        metrics.disconnected()
        endHold(of: ended)
        if isAdmitted, let outbox {
            let backend = backend
            Task { await backend.leave(outbox, claims: claims) }
        }
    }
}

extension SyncCloseReason {
    /// The close frame's code: 1008 (policy) for a token, 1013 (try again later) for a device the
    /// server could not keep.
    var closeCode: WebSocketErrorCode {
        switch self {
        // A client older than `moved` renews its token on a policy violation, as it must.
        case .tokenExpired, .tokenRevoked, .moved: .policyViolation
        case .slowConsumer, .tooManyConnections, .tryAgainLater: .unknown(1013)
        }
    }
}
