import NIOCore

/// The devices of one event loop that are arriving at once: from the upgrade of their verified
/// request for the sync path to the end of their admission (device registered, welcome queued,
/// or refused), which is the instance's work alone. At most ``limit``, and at most ``userShare``
/// of them one user's; the others wait, unread, each user's in the order they came and the users
/// in turn.
///
/// An arrival allocates far more for a moment (the admission's queries, the welcome) than a
/// connection keeps. Ten thousand devices reconnecting at once would hold all of it together and
/// leave the allocator's arenas that large, most of it free but spread between what the
/// connections keep: P11 measured 18.3–18.9 KB resident per connection so, and 12.0–12.8 KB
/// through the gate (Benchmarks/README.md). Used only on its event loop.
final class ArrivalGate {
    /// What lets a connection through the gate; handed back once, by ``release()``, on the gate's
    /// loop (its connection's).
    final class Pass: @unchecked Sendable {
        // Unchecked: touched only on the gate's loop, which `leave(_:)` checks.
        private weak var gate: ArrivalGate?
        fileprivate let user: String

        fileprivate init(_ gate: ArrivalGate, user: String) {
            self.gate = gate
            self.user = user
        }

        /// Ends the arrival, letting the next waiting connection through; the second call does
        /// nothing.
        func release() {
            guard let gate else { return }
            self.gate = nil
            gate.leave(user)
        }
    }

    private struct Waiter {
        let id: Int
        let channel: any Channel
        let promise: EventLoopPromise<Pass>
    }

    let eventLoop: any EventLoop
    /// The most connections of this loop arriving at once.
    let limit: Int
    /// The most of them one user's: a quarter, so that one user's devices, whose admissions may
    /// wait for the user's own share of the database, never hold the gate.
    let userShare: Int
    /// Connections through the gate whose pass is not released yet.
    private(set) var arriving = 0
    /// The connections waiting to arrive.
    private(set) var waitingCount = 0 {
        didSet { metrics?.arrivalsWaiting(changedBy: waitingCount - oldValue) }
    }
    /// Where the waiting connections are counted over every loop (`defaults_sync_arrivals_waiting`).
    private let metrics: ServerMetrics?
    private var held: [String: Int] = [:]
    private var queues: [String: CircularBuffer<Waiter>] = [:]
    /// The users with connections waiting, in turn.
    private var turns = CircularBuffer<String>()
    private var nextID = 0
    /// A pass of ``admitWaiting()`` is running: a connection its pass let through may end at once
    /// (its buffered bytes are a bad frame), releasing within it; that pass goes on with the room,
    /// instead of another starting a level deeper for each such connection.
    private var isAdmitting = false

    init(eventLoop: any EventLoop, limit: Int, metrics: ServerMetrics? = nil) {
        self.eventLoop = eventLoop
        self.metrics = metrics
        self.limit = max(1, limit)
        userShare = max(1, self.limit / 4)
    }

    /// A pass for `channel`, a device of `user`, once the gate has room for it; fails with
    /// `ChannelError.ioOnClosedChannel` for a channel closed before its turn, which then waits no
    /// longer. The pass is released when the channel closes, if not before.
    func enter(_ channel: any Channel, user: String) -> EventLoopFuture<Pass> {
        eventLoop.preconditionInEventLoop()
        guard channel.isActive else { return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        let promise = eventLoop.makePromise(of: Pass.self)
        if queues[user] == nil, hasRoom(for: user) {
            admit(channel, user: user, promise)
            return promise.futureResult
        }
        nextID += 1
        let waiter = Waiter(id: nextID, channel: channel, promise: promise)
        if queues[user] == nil {
            turns.append(user)
        }
        queues[user, default: []].append(waiter)
        waitingCount += 1
        channel.closeFuture.assumeIsolated().whenComplete { [weak self, id = nextID] _ in self?.forget(id, of: user) }
        return promise.futureResult
    }

    private func hasRoom(for user: String) -> Bool {
        arriving < limit && held[user, default: 0] < userShare
    }

    private func admit(_ channel: any Channel, user: String, _ promise: EventLoopPromise<Pass>) {
        arriving += 1
        held[user, default: 0] += 1
        let pass = Pass(self, user: user)
        // Whatever happens to the connection after this, its pass is not kept past its close.
        channel.closeFuture.assumeIsolated().whenComplete { _ in pass.release() }
        promise.succeed(pass)
    }

    private func leave(_ user: String) {
        eventLoop.preconditionInEventLoop()
        arriving -= 1
        held[user, default: 1] -= 1
        if held[user] == 0 { held[user] = nil }
        admitWaiting()
    }

    /// Lets waiting connections through while there is room: the users in turn, passing over
    /// those holding their share already (at most ``limit`` / ``userShare`` of them).
    private func admitWaiting() {
        guard !isAdmitting else { return }
        isAdmitting = true
        defer { isAdmitting = false }
        var passedOver = 0
        while arriving < limit, passedOver < turns.count, let user = turns.popFirst() {
            guard hasRoom(for: user) else {
                turns.append(user)
                passedOver += 1
                continue
            }
            // In place: a copy of the user's queue for each arrival would cost its length.
            guard let next = queues[user]?.popFirst() else { continue }
            passedOver = 0
            waitingCount -= 1
            if queues[user]?.isEmpty == true {
                queues[user] = nil
            } else {
                turns.append(user)
            }
            admit(next.channel, user: user, next.promise)
        }
    }

    /// A waiting connection closed: it leaves the queue (and its channel with it).
    private func forget(_ id: Int, of user: String) {
        guard let index = queues[user]?.firstIndex(where: { $0.id == id }),
            let waiter = queues[user]?.remove(at: index)
        else { return }
        waitingCount -= 1
        if queues[user]?.isEmpty == true {
            queues[user] = nil
            turns.firstIndex(of: user).map { _ = turns.remove(at: $0) }
        }
        waiter.promise.fail(ChannelError.ioOnClosedChannel)
    }
}
