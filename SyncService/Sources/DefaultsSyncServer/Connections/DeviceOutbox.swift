import DefaultsSyncProtocol
import Foundation
import Synchronization

/// What is to be sent to one device, in order. Whoever sends (the device's own requests, the
/// fan-out of other devices' changes) only queues: a slow device never holds up another.
final class DeviceOutbox: Sendable {
    static let nextID = Atomic<Int>(0)

    let id = DeviceOutbox.nextID.add(1, ordering: .relaxed).newValue
    let messages: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() {
        (messages, continuation) = AsyncStream.makeStream(of: String.self)
    }

    func send(_ message: ServerMessage) {
        guard let text = try? SyncProtocol.encode(message) else { return }
        continuation.yield(text)
    }

    func finish() {
        continuation.finish()
    }
}
