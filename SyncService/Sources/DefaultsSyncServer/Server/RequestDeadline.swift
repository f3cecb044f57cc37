import HummingbirdCore
import Logging
import NIOCore

/// Closes a connection whose request head has not arrived within a deadline.
///
/// The WebSocket upgrade channel arms Hummingbird's idle timeout only once a request head has
/// come, so a client that opens connections and sends nothing (or trickles a header a byte at a
/// time) would hold them forever. This wraps the channel and arms a deadline from the start.
struct RequestDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let deadline: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // After a TLS handler, when there is one: it reads the request in clear.
            try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(deadline: deadline))
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes its channel unless a whole request head (up to its blank line) is read by the deadline;
/// then leaves the pipeline.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?
    /// The last bytes read, to find `\r\n\r\n` across reads.
    private var tail: [UInt8] = []

    init(deadline: TimeAmount) {
        self.deadline = deadline
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

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        tail += buffer.readableBytesView
        let headEnded =
            tail.count >= 4 && (0...(tail.count - 4)).contains { tail[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
        tail = Array(tail.suffix(3))
        context.fireChannelRead(data)
        if headEnded {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) {
            channel.close(promise: nil)
        }
    }
}
