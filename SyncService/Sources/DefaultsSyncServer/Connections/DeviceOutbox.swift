import DefaultsSyncProtocol
import Foundation
import NIOCore
import Synchronization

/// What is to be sent to one device, in order, bounded in bytes. Whoever sends (the device's own
/// requests, the fan-out of other devices' changes) only queues: a slow device never holds up
/// another, and costs the instance at most a known number of bytes.
///
/// The queue counts every byte its connection has not yet taken. The device's connection reads
/// the device's next message only while fewer than ``Bounds/bytes`` wait (``hasRoom``), so a
/// device that asks and never reads is not read from either; the fan-out does not wait, but a
/// queue that passes ``Bounds/hardBytes`` closes the device as a
/// ``SyncCloseReason/slowConsumer``. The connection (``DeviceConnection``) takes what waits on its
/// event loop; the outbox wakes it, once, when something arrives for a connection that found the
/// queue empty, and when the outbox is closed.
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
        var closing: (reason: SyncCloseReason, detail: String?)?
        var isFinished = false
        /// Whether the connection found nothing to take and waits to be woken.
        var writerWaits = false

        var isEnded: Bool { isFinished || closing != nil }
    }

    static let nextID = Atomic<Int>(0)

    let id = DeviceOutbox.nextID.add(1, ordering: .relaxed).newValue
    let bounds: Bounds
    private let state = Mutex(State())
    /// Tells the connection to take what waits (called outside the lock, from any thread).
    private let wake: @Sendable () -> Void

    init(bounds: Bounds, wake: @escaping @Sendable () -> Void) {
        self.bounds = bounds
        self.wake = wake
    }

    /// The bytes waiting for the connection.
    var pendingBytes: Int { state.withLock { $0.pending } }

    /// Whether the connection may read the device's next message: fewer than ``Bounds/bytes``
    /// wait, and the outbox is open.
    var hasRoom: Bool { state.withLock { !$0.isEnded && $0.pending < bounds.bytes } }

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

    /// Queues the answer to one of the device's messages, encoded (``frame(of:)``): the
    /// connection reads a message only while the queue has room (``hasRoom``), which bounds what
    /// answers hold.
    func reply(frame: ByteBuffer) {
        enqueue(frame, bounded: false)
    }

    private func enqueue(_ buffer: ByteBuffer, bounded: Bool) {
        let (wakes, overflowed): (Bool, Bool) = state.withLock { state in
            guard !state.isEnded else { return (false, false) }
            if bounded, state.pending > 0, state.pending + buffer.readableBytes > bounds.hardBytes {
                return (false, true)
            }
            state.pending += buffer.readableBytes
            state.queue.append(buffer)
            defer { state.writerWaits = false }
            return (state.writerWaits, false)
        }
        if overflowed {
            close(.slowConsumer, detail: "more than \(bounds.hardBytes) bytes waited for the device")
        }
        if wakes { wake() }
    }

    /// The next thing for the connection to do; `nil` when nothing waits (the outbox wakes the
    /// connection when something comes) or once it is finished. The connection reports the bytes
    /// it writes with ``taken(_:)``.
    func take() -> Outgoing? {
        state.withLock { state in
            if let closing = state.closing { return .close(closing.reason, detail: closing.detail) }
            guard state.head < state.queue.count else {
                state.writerWaits = !state.isFinished
                return nil
            }
            let message = state.queue[state.head]
            state.queue[state.head] = ByteBuffer()
            state.head += 1
            if state.head == state.queue.count {
                // An idle connection keeps no queue's storage.
                state.queue.removeAll(keepingCapacity: false)
                state.head = 0
            } else if state.head >= 64, state.head * 2 >= state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            return .message(message)
        }
    }

    /// The connection took `count` bytes of the message being written: they leave the count.
    func taken(_ count: Int) {
        state.withLock { state in
            state.pending = max(0, state.pending - count)
        }
    }

    /// Closes the device's connection for `reason` (`detail` is for people and logs): what waits
    /// is dropped, and the connection sends a close frame saying why, then closes. Callable from
    /// anywhere (revocation, a token's expiry, the fan-out); the first reason wins.
    func close(_ reason: SyncCloseReason, detail: String? = nil) {
        let wakes = state.withLock { state -> Bool in
            guard !state.isEnded else { return false }
            state.closing = (reason, detail)
            // Nothing more is written: the memory goes now, not when the device reads.
            state.queue = []
            state.head = 0
            state.pending = 0
            return true
        }
        if wakes { wake() }
    }

    /// Why the outbox was closed, if it was.
    var closeReason: (reason: SyncCloseReason, detail: String?)? { state.withLock { $0.closing } }

    /// Ends the outbox when its connection ends: nothing more is queued.
    func finish() {
        state.withLock { state in
            state.isFinished = true
            state.queue = []
            state.head = 0
            state.pending = 0
        }
    }
}
