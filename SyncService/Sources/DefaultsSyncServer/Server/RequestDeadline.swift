import HummingbirdCore
import Logging
import NIOCore

/// Closes a connection that has not completed its request within a deadline, whatever it sends.
///
/// The WebSocket upgrade channel arms Hummingbird's idle timeout only once a request head has
/// come, and the HTTP parser skips empty lines before a request, so a client that opens
/// connections and sends nothing, a header a byte at a time, or blank lines forever would hold
/// them for good. This wraps the channel and arms a deadline from the start; it counts no bytes
/// and no lines, only whether the request got somewhere: the deadline starts again with each
/// response the server writes (a keep-alive connection has as long for its next request), and
/// ends when the connection becomes a WebSocket (``RequestDeadlineHandler/remove(from:)``), after
/// which the WebSocket's pings and the device's outbox judge it.
struct RequestDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let deadline: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // After a TLS handler, when there is one: a TLS handshake counts against the deadline.
            try channel.pipeline.syncOperations.addHandler(
                RequestDeadlineHandler(deadline: deadline), name: RequestDeadlineHandler.name)
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes its channel unless the server writes a response within the deadline, and again within
/// the deadline after each response; taken out of the pipeline once the connection is a WebSocket.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let name = "defaults-sync-request-deadline"

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    /// Ends the deadline of a connection that became a WebSocket.
    static func remove(from channel: any Channel) async {
        let removed: EventLoopFuture<Void> = channel.pipeline.removeHandler(name: name)
        try? await removed.get()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A response: the client's request got an answer, so its next one has a deadline of its
        // own. Whatever the client sends never moves the deadline.
        timer?.cancel()
        timer = nil
        arm(context)
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) {
            channel.close(promise: nil)
        }
    }
}
