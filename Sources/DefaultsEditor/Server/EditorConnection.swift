import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// One connection to the editor: reads a request (its body bounded by ``RequestGate/bodyLimit``),
/// asks the gate, and writes the answer, or keeps the connection as an event stream.
final class EditorConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let gate: RequestGate
    private let responder: EditorResponder
    private let events: DomainEvents
    private let shared: EditorServer.SharedState

    private var head: HTTPRequestHead?
    private var verdict: RequestGate.Verdict?
    private var body = ByteBuffer()
    /// A refused request was answered at its head: what follows of it is not read, and the
    /// connection closes once the answer is written.
    private var isClosing = false
    /// Closes the connection when a whole request has not come in time.
    private var deadline: Scheduled<Void>?
    /// The listener of ``DomainEvents`` while this connection is an event stream.
    private var listener: Int?
    private var keepAlive: RepeatedTask?
    /// Since when the connection has been unable to take more (nanoseconds of the monotonic
    /// clock, 0 while it can): read by the event stream's listener, off the event loop.
    private let unwritableSince = UnwritableSince()

    final class UnwritableSince: Sendable {
        let nanoseconds = Atomic<UInt64>(0)

        /// Whether the connection has taken nothing for ``EditorServer/unreadTimeout``: a page
        /// that reads nothing, not one behind for a moment after a large event.
        var isUnread: Bool {
            let since = nanoseconds.load(ordering: .relaxed)
            guard since != 0 else { return false }
            return DispatchTime.now().uptimeNanoseconds - since >= UInt64(EditorServer.unreadTimeout / .nanoseconds(1))
        }
    }

    init(gate: RequestGate, responder: EditorResponder, events: DomainEvents, shared: EditorServer.SharedState) {
        self.gate = gate
        self.responder = responder
        self.events = events
        self.shared = shared
    }

    /// Headers every answer carries: the page runs only its own script and style, is shown in no
    /// frame, and tells no other site its address.
    static let securityHeaders: [(String, String)] = [
        (
            "content-security-policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
        ("cross-origin-resource-policy", "same-origin"),
        ("cross-origin-opener-policy", "same-origin"),
    ]

    func channelActive(context: ChannelHandlerContext) {
        let open = shared.connections.wrappingAdd(1, ordering: .relaxed).newValue
        if open > EditorServer.connectionLimit {
            context.close(promise: nil)
        }
        armDeadline(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        shared.connections.wrappingSubtract(1, ordering: .relaxed)
        if let listener {
            events.stopListening(listener)
        }
        keepAlive?.cancel()
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let now = DispatchTime.now().uptimeNanoseconds
        unwritableSince.nanoseconds.store(context.channel.isWritable ? 0 : now, ordering: .relaxed)
        context.fireChannelWritabilityChanged()
    }

    /// Gives the connection ``EditorServer/requestTimeout`` to send a whole request.
    private func armDeadline(context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: EditorServer.requestTimeout) {
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            body.clear()
            let verdict = gate.judge(
                method: head.method.rawValue, target: head.uri,
                headers: head.headers.map { (name: $0.name, value: $0.value) })
            if case .refused = verdict {
                // Answered now: a refused request's body is never read.
                isClosing = true
                answer(head, verdict, context: context)
                return
            }
            self.head = head
            self.verdict = verdict
        case .body(var chunk):
            guard case .allowed(let route, _) = verdict, route.isWrite else { return }
            guard body.readableBytes + chunk.readableBytes <= RequestGate.bodyLimit else {
                // Answered now, and the rest of the body never read.
                body.clear()
                isClosing = true
                if let head { answer(head, RequestGate.tooLarge, context: context) }
                return
            }
            body.writeBuffer(&chunk)
        case .end:
            guard let head, let verdict else { return }
            self.head = nil
            self.verdict = nil
            deadline?.cancel()
            answer(head, verdict, context: context)
        }
    }

    private func answer(_ head: HTTPRequestHead, _ verdict: RequestGate.Verdict, context: ChannelHandlerContext) {
        switch verdict {
        case .refused(let status, let reason):
            let response: EditorResponse =
                head.uri.contains("/api/")
                ? .failure(EditorFailure(status: status, reason))
                : EditorResponse(
                    status: status, contentType: "text/plain; charset=utf-8", body: Data((reason + "\n").utf8))
            write(response, for: head, context: context)
        case .redirect(let location):
            var response = EditorResponse(status: 308, contentType: "text/plain; charset=utf-8", body: Data())
            response.location = location
            write(response, for: head, context: context)
        case .allowed(.events, _):
            stream(head, context: context)
        case .allowed(let route, let query) where route.isPageFile:
            // Constant bytes: answered at once, not behind other requests.
            write(responder.respond(to: route, query: query, body: Data()), for: head, context: context)
        case .allowed(let route, let query):
            let body = Data(self.body.readableBytesView)
            self.body.clear()
            let shared = shared
            guard shared.pending.wrappingAdd(1, ordering: .relaxed).newValue <= EditorServer.pendingLimit else {
                shared.pending.wrappingSubtract(1, ordering: .relaxed)
                write(
                    .failure(EditorFailure(status: 503, "The editor is busy; try again")), for: head, context: context)
                return
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let channel = context.channel
            let responder = responder
            shared.work.async {
                defer { shared.pending.wrappingSubtract(1, ordering: .relaxed) }
                // A connection gone while its request waited is not answered: nothing reads it.
                guard channel.isActive else { return }
                let response = responder.respond(to: route, query: query, body: body)
                bound.eventLoop.execute {
                    let (connection, context) = bound.value
                    connection.write(response, for: head, context: context)
                }
            }
        }
    }

    /// Keeps the connection as an event stream (`text/event-stream`) until the page goes.
    private func stream(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let channel = context.channel
        let unwritableSince = unwritableSince
        let listener = events.listen { event in
            // A page that has read nothing for a while is closed, not buffered for: it reconnects
            // and reads the domain again.
            guard channel.isActive, !unwritableSince.isUnread else {
                channel.close(promise: nil)
                return false
            }
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: event))), promise: nil)
            return true
        }
        guard let listener else {
            write(
                .failure(EditorFailure(status: 503, "Too many pages are open on this editor")), for: head,
                context: context)
            return
        }
        self.listener = listener
        deadline?.cancel()
        var headers = HTTPHeaders(Self.securityHeaders)
        headers.add(name: "content-type", value: "text/event-stream; charset=utf-8")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil
        )
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: ": live\n\n")))), promise: nil)
        keepAlive = context.eventLoop.scheduleRepeatedTask(
            initialDelay: EditorServer.keepAliveInterval, delay: EditorServer.keepAliveInterval
        ) { _ in
            guard !unwritableSince.isUnread else {
                channel.close(promise: nil)
                return
            }
            channel.writeAndFlush(
                HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: ": alive\n\n"))), promise: nil)
        }
    }

    private func write(_ response: EditorResponse, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(Self.securityHeaders)
        headers.add(name: "content-type", value: response.contentType)
        headers.add(name: "content-length", value: String(response.body.count))
        if let location = response.location {
            headers.add(name: "location", value: location)
        }
        let keepAlive = head.isKeepAlive && response.status < 400 && !isClosing
        headers.add(name: "connection", value: keepAlive ? "keep-alive" : "close")
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if head.method != .HEAD, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if keepAlive {
            armDeadline(context: context)
        } else {
            written.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}
