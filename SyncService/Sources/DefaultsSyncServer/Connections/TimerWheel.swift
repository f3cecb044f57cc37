import NIOCore

/// What a ``TimerWheel`` wakes: a connection whose next deadline came.
protocol TimerWheelClient: AnyObject {
    /// The wheel's mark of the client's current deadline: an older mark's slot is ignored.
    var wheelMark: Int { get set }
    /// The deadline came (or passed, by less than a tick): the client acts and schedules its next.
    func deadlineCame(now: NIODeadline)
}

/// Every deadline of the connections on one event loop (pings, tokens, stalled outboxes, close
/// handshakes), from one repeated task of the loop instead of a sleeping task or a scheduled timer
/// per connection: a hashed timing wheel of ``slotCount`` slots of one ``tick`` each, a deadline
/// further away than one turn waiting in its slot for its turn. A connection has one deadline at a
/// time (the earliest of its own); scheduling again supersedes the last, whose entry is dropped
/// when its slot comes. Used only on its event loop.
final class TimerWheel {
    static let tick = TimeAmount.milliseconds(100)
    static let slotCount = 512

    private struct Entry {
        weak var client: (any TimerWheelClient)?
        var mark: Int
        var tick: Int64
    }

    let eventLoop: any EventLoop
    private let origin: NIODeadline
    private var slots: [[Entry]]
    /// The next tick to run (while one runs, the one running).
    private var cursor: Int64 = 1
    private var isAdvancing = false
    private var marks = 0
    private var ticking: RepeatedTask?

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        origin = eventLoop.now
        slots = Array(repeating: [], count: Self.slotCount)
    }

    /// Wakes `client` at `deadline` (at the first tick at or after it), instead of the deadline it
    /// had.
    func schedule(_ client: any TimerWheelClient, at deadline: NIODeadline) {
        eventLoop.preconditionInEventLoop()
        marks += 1
        client.wheelMark = marks
        // Never into the slot running now: it would wait a whole turn.
        let due = max(isAdvancing ? cursor + 1 : cursor, ticks(to: deadline))
        slots[Int(due % Int64(Self.slotCount))].append(Entry(client: client, mark: marks, tick: due))
        if ticking == nil {
            // Weakly: the wheel goes with the last connection holding it, and its task with it.
            let wheel = NIOLoopBound(Weak(self), eventLoop: eventLoop)
            ticking = eventLoop.scheduleRepeatedTask(initialDelay: Self.tick, delay: Self.tick) { task in
                guard let wheel = wheel.value.object else { return task.cancel() }
                wheel.advance()
            }
        }
    }

    /// Forgets `client`'s deadline.
    func cancel(_ client: any TimerWheelClient) {
        marks += 1
        client.wheelMark = marks
    }

    /// The ticks from the wheel's start to `deadline`: rounded up for a deadline (never early),
    /// down for the time now.
    private func ticks(to deadline: NIODeadline, roundingUp: Bool = true) -> Int64 {
        let nanoseconds = (deadline - origin).nanoseconds
        let tick = Self.tick.nanoseconds
        return nanoseconds <= 0 ? 0 : (nanoseconds + (roundingUp ? tick - 1 : 0)) / tick
    }

    /// Runs every tick up to now.
    private func advance() {
        let now = eventLoop.now
        let last = ticks(to: now, roundingUp: false)
        isAdvancing = true
        defer { isAdvancing = false }
        while cursor <= last {
            let index = Int(cursor % Int64(Self.slotCount))
            let entries = slots[index]
            slots[index] = []
            var waiting: [Entry] = []
            for entry in entries {
                guard let client = entry.client, client.wheelMark == entry.mark else { continue }
                if entry.tick > cursor {
                    waiting.append(entry)
                } else {
                    client.deadlineCame(now: now)
                }
            }
            // What waits a turn goes back.
            slots[index].append(contentsOf: waiting)
            cursor += 1
        }
    }
}

/// A weak reference, for a callback that must not keep its object alive.
final class Weak<Object: AnyObject> {
    weak var object: Object?

    init(_ object: Object) {
        self.object = object
    }
}
