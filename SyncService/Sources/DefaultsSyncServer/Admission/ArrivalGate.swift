import NIOCore

/// The device connections of one event loop that are arriving at once: from their request for the
/// sync path to the end of their admission (token verified, device registered, welcome queued, or
/// refused). At most ``limit``; the others wait, unread, in the order they asked.
///
/// An arrival allocates far more for a moment (the request, the token's verification, the
/// admission's queries, the welcome) than a connection keeps. Ten thousand devices reconnecting
/// at once would hold all of it together and leave the allocator's arenas that large, most of it
/// free but spread between what the connections keep: P11 measured 18.3 KB resident per
/// connection so, and 9.1 KB with arrivals bounded (Benchmarks/README.md). A connection waiting
/// here holds only its socket and its request. Used only on its event loop.
final class ArrivalGate {
    /// What lets a connection through the gate; handed back once, by ``release()``, on the gate's
    /// loop (its connection's).
    final class Pass: @unchecked Sendable {
        // Unchecked: touched only on the gate's loop, which `leave()` checks.
        private weak var gate: ArrivalGate?

        fileprivate init(_ gate: ArrivalGate) {
            self.gate = gate
        }

        /// Ends the arrival, letting the next waiting connection through; the second call does
        /// nothing.
        func release() {
            guard let gate else { return }
            self.gate = nil
            gate.leave()
        }
    }

    let eventLoop: any EventLoop
    /// The most connections of this loop arriving at once.
    let limit: Int
    /// Connections through the gate whose pass is not released yet.
    private(set) var arriving = 0
    private var waiting = CircularBuffer<(channel: any Channel, promise: EventLoopPromise<Pass>)>()

    init(eventLoop: any EventLoop, limit: Int) {
        self.eventLoop = eventLoop
        self.limit = max(1, limit)
    }

    /// The connections waiting to arrive.
    var waitingCount: Int { waiting.count }

    /// A pass for `channel` once fewer than ``limit`` connections are arriving, waiting behind the
    /// connections that asked before; fails with `ChannelError.ioOnClosedChannel` for a channel
    /// closed meanwhile. The pass is released when the channel closes, if not before.
    func enter(_ channel: any Channel) -> EventLoopFuture<Pass> {
        eventLoop.preconditionInEventLoop()
        let promise = eventLoop.makePromise(of: Pass.self)
        if arriving < limit {
            admit(channel, promise)
        } else {
            waiting.append((channel, promise))
        }
        return promise.futureResult
    }

    private func admit(_ channel: any Channel, _ promise: EventLoopPromise<Pass>) {
        arriving += 1
        let pass = Pass(self)
        // Whatever happens to the connection after this, its pass is not kept past its close.
        channel.closeFuture.whenComplete { _ in pass.release() }
        promise.succeed(pass)
    }

    private func leave() {
        eventLoop.preconditionInEventLoop()
        arriving -= 1
        // A connection closed while it waited gives its turn to the next.
        while arriving < limit, let next = waiting.popFirst() {
            if next.channel.isActive {
                admit(next.channel, next.promise)
            } else {
                next.promise.fail(ChannelError.ioOnClosedChannel)
            }
        }
    }
}
