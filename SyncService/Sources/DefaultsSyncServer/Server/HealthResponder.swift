import NIOCore
import NIOHTTP1

/// The devices' port's plain HTTP: `GET /health` answers 200 while the database answers and 503
/// otherwise (JSON with the status and the connections); anything else is 404. Requests come one
/// at a time (NIO's pipelining handler holds the next until this one's answer is written, and
/// closes the connection after it when the server stops).
final class HealthResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "defaults-sync-health"

    private let check: @Sendable () async -> (healthy: Bool, body: String)
    private var head: HTTPRequestHead?

    init(check: @escaping @Sendable () async -> (healthy: Bool, body: String)) {
        self.check = check
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break  // no request here has a body: read and dropped
        case .end:
            guard let head else { return }
            self.head = nil
            answer(head, context: context)
        }
    }

    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", omittingEmptySubsequences: false).first ?? ""
        guard head.method == .GET, path == "/health" else {
            return respond(.notFound, body: "", to: head, context: context)
        }
        let check = check
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.makeFutureWithTask { await check() }.whenSuccess { result in
            let (me, context) = loopBound.value
            me.respond(result.healthy ? .ok : .serviceUnavailable, body: result.body, to: head, context: context)
        }
    }

    private func respond(
        _ status: HTTPResponseStatus, body: String, to request: HTTPRequestHead, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "content-length", value: "\(body.utf8.count)")
        if !body.isEmpty { headers.add(name: "content-type", value: "application/json") }
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        if !body.isEmpty {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}
