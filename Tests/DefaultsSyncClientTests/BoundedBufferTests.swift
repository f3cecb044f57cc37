import Synchronization
import TestSupport
import Testing

@_spi(Testing) @testable import DefaultsSyncClient

/// The buffer between the connection's reader and the library: it never holds more than its
/// capacity (the reader waits for room, and so reads no more from the socket), and never drops
/// or reorders what it took.
struct BoundedBufferTests {
    @Test(.timeLimit(.minutes(1)))
    func aProducerWaitsForRoomAndNothingIsDroppedOrReordered() async throws {
        let buffer = BoundedBuffer<Int>(capacity: 3)
        let count = 24
        let sent = Atomic<Int>(0)
        let producer = Task {
            for element in 0..<count {
                guard await buffer.send(element) else { return }
                sent.add(1, ordering: .relaxed)
            }
            buffer.finish()
        }
        var received: [Int] = []
        // A consumer that reads one element only once the producer has filled the buffer: the
        // producer is then waiting, never ahead by more than the capacity.
        while received.count < count {
            let filled = min(received.count + buffer.capacity, count)
            try await waitUntil("the buffer filled") { sent.load(ordering: .relaxed) >= filled }
            for _ in 0..<3 { await Task.yield() }
            #expect(sent.load(ordering: .relaxed) - received.count <= buffer.capacity)
            guard let element = await buffer.next() else { break }
            received.append(element)
        }
        #expect(await buffer.next() == nil)
        await producer.value
        #expect(received == Array(0..<count))
    }

    @Test(.timeLimit(.minutes(1)))
    func finishingHandsOverWhatIsHeldAndFreesAWaitingProducer() async throws {
        let buffer = BoundedBuffer<Int>(capacity: 2)
        #expect(await buffer.send(1))
        #expect(await buffer.send(2))
        let waiting = Task { await buffer.send(3) }
        buffer.finish()
        #expect(await waiting.value == false)
        #expect(await buffer.send(4) == false)
        #expect(await buffer.next() == 1)
        #expect(await buffer.next() == 2)
        #expect(await buffer.next() == nil)
    }

    /// While any call awaits its answer the producer goes past the capacity, woken if it waits;
    /// once none does, it waits for room again.
    @Test(.timeLimit(.minutes(1)))
    func aLiftedBoundLetsTheProducerOnUntilEveryLiftIsRestored() async throws {
        let buffer = BoundedBuffer<Int>(capacity: 2)
        #expect(await buffer.send(1))
        #expect(await buffer.send(2))
        let waiting = Task { await buffer.send(3) }
        buffer.liftBound()
        #expect(await waiting.value)
        // A cancelled task's send adds only where it need not wait.
        buffer.liftBound()
        buffer.restoreBound()
        #expect(await Self.sendFromCancelledTask(4, to: buffer), "one lift is left")
        buffer.restoreBound()
        #expect(await Self.sendFromCancelledTask(5, to: buffer) == false, "the bound holds again")
        for element in 1...4 {
            #expect(await buffer.next() == element)
        }
        #expect(await buffer.send(5))
        #expect(await buffer.next() == 5)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCancelledProducerStopsWaitingAndAddsNothing() async throws {
        let buffer = BoundedBuffer<Int>(capacity: 1)
        #expect(await buffer.send(1))
        let waiting = Task { await buffer.send(2) }
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(await buffer.next() == 1)
        buffer.finish()
        #expect(await buffer.next() == nil)
    }

    /// `send` from a task cancelled before it starts: it returns at once rather than wait.
    private static func sendFromCancelledTask(_ element: Int, to buffer: BoundedBuffer<Int>) async -> Bool {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await buffer.send(element)
        }
        return await task.value
    }
}
