import Foundation
import NIOCore
import NIOHTTP1

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
    private var isAnswering = false
    /// The listener of ``DomainEvents`` while this connection is an event stream.
    private var listener: Int?
    private var keepAlive: RepeatedTask?

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
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        shared.connections.wrappingSubtract(1, ordering: .relaxed)
        if let listener {
            events.stopListening(listener)
        }
        keepAlive?.cancel()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent, listener == nil, !isAnswering {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
            verdict = gate.judge(
                method: head.method.rawValue, target: head.uri,
                headers: head.headers.map { (name: $0.name, value: $0.value) })
        case .body(var chunk):
            guard case .allowed(let route, _) = verdict, route.isWrite else { return }
            guard body.readableBytes + chunk.readableBytes <= RequestGate.bodyLimit else {
                verdict = .refused(status: 413, reason: "A change is at most \(RequestGate.bodyLimit) bytes")
                body.clear()
                return
            }
            body.writeBuffer(&chunk)
        case .end:
            guard let head, let verdict else { return }
            self.head = nil
            self.verdict = nil
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
        case .allowed(let route, let query):
            isAnswering = true
            let body = Data(self.body.readableBytesView)
            self.body.clear()
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let responder = responder
            shared.work.async {
                let response = responder.respond(to: route, query: query, body: body)
                bound.eventLoop.execute {
                    let (connection, context) = bound.value
                    connection.isAnswering = false
                    connection.write(response, for: head, context: context)
                }
            }
        }
    }

    /// Keeps the connection as an event stream (`text/event-stream`) until the page goes.
    private func stream(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let channel = context.channel
        let listener = events.listen { event in
            // A page that does not read what it is sent is closed, not buffered for: it reconnects
            // and reads the domain again.
            guard channel.isActive, channel.isWritable else {
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
        var headers = HTTPHeaders(Self.securityHeaders)
        headers.add(name: "content-type", value: "text/event-stream; charset=utf-8")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil
        )
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: ": live\n\n")))), promise: nil)
        keepAlive = context.eventLoop.scheduleRepeatedTask(
            initialDelay: EditorServer.keepAliveInterval, delay: EditorServer.keepAliveInterval
        ) { _ in
            guard channel.isWritable else {
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
        let keepAlive = head.isKeepAlive && response.status < 400
        headers.add(name: "connection", value: keepAlive ? "keep-alive" : "close")
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if head.method != .HEAD, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}
