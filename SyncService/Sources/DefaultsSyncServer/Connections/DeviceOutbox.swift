import DefaultsSyncProtocol
import Foundation
import NIOCore
import Synchronization

/// What is to be sent to one device, in order, bounded in bytes. Whoever sends (the device's own
/// requests, the fan-out of other devices' changes) only queues: a slow device never holds up
/// another, and costs the instance at most a known number of bytes.
///
/// The queue counts every byte its connection has not yet taken. The device's session reads the
/// device's next message only while fewer than ``Bounds/bytes`` wait (``waitForRoom()``), so a
/// device that asks and never reads is not read from either; the fan-out does not wait, but a
/// queue that passes ``Bounds/hardBytes`` closes the device. A device whose connection takes
/// nothing for ``Bounds/stall`` while something waits (its peer reads nothing) is closed as well:
/// both as ``SyncCloseReason/slowConsumer``.
final class DeviceOutbox: Sendable {
    /// How much a device's queue may hold, and for how long it may stand still.
    struct Bounds: Sendable {
        /// While more bytes than this wait, the device's messages are not read.
        var bytes: Int
        /// A queue past this is closed at once (one message alone never is).
        var hardBytes: Int
        /// A connection that takes nothing for this long while something waits is closed.
        var stall: Duration
    }

    /// What the connection's writer does next.
    enum Outgoing {
        /// Writes one message, in UTF-8.
        case message(ByteBuffer)
        /// Closes the connection for this reason.
        case close(SyncCloseReason, detail: String?)
    }

    private struct State {
        var queue: [ByteBuffer] = []
        var head = 0
        /// The bytes queued and not yet taken by the connection, the one being written included.
        var pending = 0
        /// When the connection last took bytes, or the queue last went from empty to not.
        var lastProgress = ContinuousClock.now
        var closing: (reason: SyncCloseReason, detail: String?)?
        var isFinished = false
        var writer: CheckedContinuation<Outgoing?, Never>?
        var roomWaiters: [CheckedContinuation<Bool, Never>] = []
        var endWaiters: [CheckedContinuation<(reason: SyncCloseReason, detail: String?)?, Never>] = []

        var isEnded: Bool { isFinished || closing != nil }
    }

    static let nextID = Atomic<Int>(0)

    let id = DeviceOutbox.nextID.add(1, ordering: .relaxed).newValue
    let bounds: Bounds
    private let state = Mutex(State())

    init(bounds: Bounds) {
        self.bounds = bounds
    }

    /// The bytes waiting for the connection.
    var pendingBytes: Int { state.withLock { $0.pending } }

    /// Queues `message`, which does not wait for room (the fan-out, a welcome); closes the device
    /// as a slow consumer when that takes its queue past the hard bound.
    func send(_ message: ServerMessage) {
        guard let frame = Self.frame(of: message) else { return }
        send(frame: frame)
    }

    /// Queues a message already encoded (``frame(of:)``) as ``send(_:)`` does: the fan-out encodes
    /// a change once for every device of its group, which share the one buffer.
    func send(frame: ByteBuffer) {
        enqueue(frame, bounded: true)
    }

    /// `message` as the text a frame carries; `nil` for one that does not encode.
    static func frame(of message: ServerMessage) -> ByteBuffer? {
        (try? SyncProtocol.encode(message)).map { ByteBuffer(string: $0) }
    }

    /// Queues the answer to one of the device's messages: the session reads a message only while
    /// the queue has room (``waitForRoom()``), which bounds what answers hold.
    func reply(_ message: ServerMessage) {
        guard let frame = Self.frame(of: message) else { return }
        enqueue(frame, bounded: false)
    }

    private func enqueue(_ buffer: ByteBuffer, bounded: Bool) {
        let (writer, overflowed): (CheckedContinuation<Outgoing?, Never>?, Bool) = state.withLock { state in
            guard !state.isEnded else { return (nil, false) }
            if bounded, state.pending > 0, state.pending + buffer.readableBytes > bounds.hardBytes {
                return (nil, true)
            }
            if state.pending == 0 { state.lastProgress = .now }
            state.pending += buffer.readableBytes
            if let writer = state.writer {
                state.writer = nil
                return (writer, false)
            }
            state.queue.append(buffer)
            return (nil, false)
        }
        if overflowed {
            close(.slowConsumer, detail: "more than \(bounds.hardBytes) bytes waited for the device")
        }
        writer?.resume(returning: .message(buffer))
    }

    /// Waits until fewer than ``Bounds/bytes`` wait for the connection; `false` once the outbox
    /// is closed or finished.
    func waitForRoom() async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { state in
                if state.isEnded { return false }
                if state.pending < bounds.bytes { return true }
                state.roomWaiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// The next thing for the connection's one writer to do; `nil` once the outbox is finished.
    /// The writer reports the bytes it writes with ``taken(_:)`` and a message done with
    /// ``written()``.
    func next() async -> Outgoing? {
        await withCheckedContinuation { continuation in
            let ready: Outgoing?? = state.withLock { state in
                if let closing = state.closing { return .some(.close(closing.reason, detail: closing.detail)) }
                if state.head < state.queue.count {
                    let message = state.queue[state.head]
                    state.queue[state.head] = ByteBuffer()
                    state.head += 1
                    if state.head == state.queue.count {
                        state.queue.removeAll(keepingCapacity: state.queue.count < 64)
                        state.head = 0
                    } else if state.head >= 64, state.head * 2 >= state.queue.count {
                        state.queue.removeFirst(state.head)
                        state.head = 0
                    }
                    return .some(.message(message))
                }
                if state.isFinished { return .some(nil) }
                state.writer = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The connection took `count` bytes of the message being written: they leave the count, and
    /// the device may be read from again once the queue is under its bound.
    func taken(_ count: Int) {
        let waiters: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            state.pending = max(0, state.pending - count)
            state.lastProgress = .now
            guard state.pending < bounds.bytes else { return [] }
            defer { state.roomWaiters = [] }
            return state.roomWaiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// How long the connection has taken nothing while something waited for it; zero when nothing
    /// waits.
    func stalled(at now: ContinuousClock.Instant = .now) -> Duration {
        state.withLock { state in
            state.pending > 0 && !state.isEnded ? state.lastProgress.duration(to: now) : .zero
        }
    }

    /// Closes the device's connection for `reason` (`detail` is for people and logs): what waits
    /// is dropped, and the session sends a close frame saying why, then closes the connection.
    /// Callable from anywhere (revocation, a token's expiry, the fan-out); the first reason wins.
    func close(_ reason: SyncCloseReason, detail: String? = nil) {
        end { state in
            guard !state.isEnded else { return false }
            state.closing = (reason, detail)
            return true
        }
    }

    /// Why the outbox was closed, if it was.
    var closeReason: (reason: SyncCloseReason, detail: String?)? { state.withLock { $0.closing } }

    /// Waits until the outbox is closed (and returns why) or finished (`nil`).
    func ended() async -> (reason: SyncCloseReason, detail: String?)? {
        await withCheckedContinuation { continuation in
            let ended: (reason: SyncCloseReason, detail: String?)?? = state.withLock { state in
                guard state.isEnded else {
                    state.endWaiters.append(continuation)
                    return nil
                }
                return .some(state.closing)
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Ends the outbox when its session ends: the writer stops after what waits.
    func finish() {
        end { state in
            guard !state.isFinished else { return false }
            state.isFinished = true
            return true
        }
    }

    private func end(_ change: (inout State) -> Bool) {
        guard
            let ended = state.withLock({ state -> State? in
                guard change(&state) else { return nil }
                if state.closing != nil {
                    // Nothing more is written: the memory goes now, not when the device reads.
                    state.queue = []
                    state.head = 0
                    state.pending = 0
                }
                defer {
                    state.writer = nil
                    state.roomWaiters = []
                    state.endWaiters = []
                }
                return state
            })
        else { return }
        let closing = ended.closing
        ended.writer?.resume(returning: closing.map { .close($0.reason, detail: $0.detail) })
        for waiter in ended.roomWaiters { waiter.resume(returning: false) }
        for waiter in ended.endWaiters { waiter.resume(returning: closing) }
    }
}
