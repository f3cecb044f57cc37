import NIOCore
import Synchronization

/// One value for each event loop of a server (a ``TimerWheel``, an ``ArrivalGate``), made as the
/// loop's first connection comes; each used only on its loop.
final class EventLoopLocal<Value: AnyObject>: @unchecked Sendable {
    // Unchecked: a value is used only on its own loop, which its users check.
    private let values = Mutex<[ObjectIdentifier: Value]>([:])
    private let make: @Sendable (any EventLoop) -> Value

    init(_ make: @escaping @Sendable (any EventLoop) -> Value) {
        self.make = make
    }

    /// The value of `eventLoop`; called on that loop.
    func value(for eventLoop: any EventLoop) -> Value {
        values.withLock { values in
            if let value = values[ObjectIdentifier(eventLoop)] { return value }
            let value = make(eventLoop)
            values[ObjectIdentifier(eventLoop)] = value
            return value
        }
    }
}
