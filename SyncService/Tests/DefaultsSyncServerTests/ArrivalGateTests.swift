import NIOCore
import NIOEmbedded
import Testing

@testable import DefaultsSyncServer

/// The connections of one event loop arriving at once (``ArrivalGate``), on NIO's embedded loop:
/// no network, every step deterministic.
@Suite struct ArrivalGateTests {
    /// Connected channels on `loop`, as the gate sees arriving connections.
    private func channels(_ count: Int, on loop: EmbeddedEventLoop) throws -> [EmbeddedChannel] {
        try (0..<count).map { _ in
            let channel = EmbeddedChannel(loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            return channel
        }
    }

    @Test func atMostTheLimitArriveAtOnceAndTheOthersGoInTheOrderTheyAsked() throws {
        let loop = EmbeddedEventLoop()
        let gate = ArrivalGate(eventLoop: loop, limit: 2)
        let arriving = try channels(5, on: loop)
        let outcomes = Outcomes()
        for (index, channel) in arriving.enumerated() {
            gate.enter(channel, user: "u\(index)").whenComplete { result in
                switch result {
                case .success(let pass): outcomes.passes[index] = pass
                case .failure: outcomes.failed.append(index)
                }
            }
        }
        var passes: [Int: ArrivalGate.Pass] { outcomes.passes }
        var failed: [Int] { outcomes.failed }
        #expect(passes.keys.sorted() == [0, 1] && gate.arriving == 2 && gate.waitingCount == 3)

        passes[0]?.release()
        #expect(passes.keys.sorted() == [0, 1, 2] && gate.arriving == 2)
        // Released twice, a pass lets no one more through.
        passes[0]?.release()
        #expect(passes.count == 3 && gate.arriving == 2 && gate.waitingCount == 2)

        // A connection that closes while it waits leaves the queue at once, and gives its turn.
        _ = try arriving[3].finish()
        #expect(failed == [3] && gate.waitingCount == 1)
        passes[1]?.release()
        #expect(passes.keys.sorted() == [0, 1, 2, 4] && gate.waitingCount == 0)

        // A connection that closes through the gate releases its pass itself.
        _ = try arriving[2].finish()
        #expect(gate.arriving == 1)
        passes[4]?.release()
        #expect(gate.arriving == 0)
        _ = try arriving[4].finish()
        #expect(gate.arriving == 0)
    }

    @Test func oneUsersDevicesHoldAQuarterOfTheTurnsAndTheOthersPassThem() throws {
        let loop = EmbeddedEventLoop()
        let gate = ArrivalGate(eventLoop: loop, limit: 8)
        #expect(gate.userShare == 2)
        let arriving = try channels(7, on: loop)
        let outcomes = Outcomes()
        // Five of one user's devices ask first, then one device each of two other users.
        for (index, (channel, user)) in zip(arriving, ["a", "a", "a", "a", "a", "b", "c"]).enumerated() {
            gate.enter(channel, user: user).whenSuccess { outcomes.passes[index] = $0 }
        }
        #expect(outcomes.passes.keys.sorted() == [0, 1, 5, 6] && gate.waitingCount == 3)
        // Their turns come one for one as the user's own arrivals end.
        outcomes.passes[5]?.release()
        #expect(outcomes.passes.count == 4)
        outcomes.passes[0]?.release()
        #expect(outcomes.passes.keys.sorted() == [0, 1, 2, 5, 6] && gate.arriving == 3)
        // A closed channel is refused at once and takes no turn.
        let closed = EmbeddedChannel(loop: loop)
        var refused = false
        gate.enter(closed, user: "d").assumeIsolated().whenFailure { _ in refused = true }
        #expect(refused && gate.arriving == 3)
    }

    /// Connections that end the moment they are let through (a bad frame waiting in their
    /// buffer) release their turn within the pass that let them through: the next go through in
    /// that same pass, never one call deeper each.
    @Test func connectionsEndingAsTheyArriveAreLetThroughWithoutNesting() throws {
        let loop = EmbeddedEventLoop()
        let gate = ArrivalGate(eventLoop: loop, limit: 1)
        let first = try channels(1, on: loop)[0]
        let outcomes = Outcomes()
        gate.enter(first, user: "first").whenSuccess { outcomes.passes[-1] = $0 }
        let arriving = try channels(500, on: loop)
        var depth = 0
        var deepest = 0
        var through = 0
        for (index, channel) in arriving.enumerated() {
            gate.enter(channel, user: "u\(index)").assumeIsolated().whenSuccess { _ in
                depth += 1
                deepest = max(deepest, depth)
                through += 1
                _ = try? channel.finish()
                depth -= 1
            }
        }
        #expect(gate.waitingCount == 500)
        outcomes.passes[-1]?.release()
        #expect(through == 500 && deepest == 1 && gate.arriving == 0 && gate.waitingCount == 0)
    }

    /// A connection waiting its turn closes when its device hangs up (its input closed) or the
    /// server stops; other events pass.
    @Test func aWaitingConnectionClosesWhenItsDeviceHangsUpOrTheServerStops() throws {
        let hangUp: (EmbeddedChannel) -> Void = { $0.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        let stop: (EmbeddedChannel) -> Void = { $0.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        for (name, event) in [("hang-up", hangUp), ("stop", stop)] {
            let channel = EmbeddedChannel(handler: WaitingArrival())
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.outputClosed)
            #expect(channel.isActive)
            event(channel)
            #expect(!channel.isActive, "\(name)")
        }
    }

    /// `defaults_sync_arrivals_waiting` counts the connections waiting on every loop of the
    /// instance, and each leaves it once, let through or closed.
    @Test func theInstancesGaugeCountsTheWaitingOnEveryLoop() throws {
        let metrics = ServerMetrics()
        let loops = [EmbeddedEventLoop(), EmbeddedEventLoop()]
        let gates = loops.map { ArrivalGate(eventLoop: $0, limit: 1, metrics: metrics) }
        let arriving = try loops.map { try channels(3, on: $0) }
        let outcomes = Outcomes()
        for (gate, channels) in zip(gates, arriving) {
            for (index, channel) in channels.enumerated() {
                gate.enter(channel, user: "u\(index)").whenSuccess { outcomes.passes[outcomes.passes.count] = $0 }
            }
        }
        #expect(metrics.currentArrivalsWaiting == 4 && outcomes.passes.count == 2)
        // One waiter hangs up on the first loop; the second loop's first arrival ends.
        _ = try arriving[0][2].finish()
        _ = try arriving[1][0].finish()
        #expect(metrics.currentArrivalsWaiting == 2 && outcomes.passes.count == 3)
        for channels in arriving { for channel in channels where channel.isActive { _ = try channel.finish() } }
        #expect(metrics.currentArrivalsWaiting == 0 && gates.allSatisfy { $0.arriving == 0 })
    }

    @Test func theInstancesLimitIsSpreadOverItsLoopsRoundingUp() {
        var configuration = SyncServerConfiguration(databaseURL: "postgres://localhost/db", tokenKeyFiles: [])
        #expect(configuration.arrivingConnections(perLoopOf: 8) == 16)
        configuration.arrivingConnections = 20
        #expect(configuration.arrivingConnections(perLoopOf: 8) == 3)
        configuration.arrivingConnections = 1
        #expect(configuration.arrivingConnections(perLoopOf: 8) == 1)
        #expect(configuration.arrivingConnections(perLoopOf: 0) == 1)
    }
}

/// What each connection's turn at the gate came to.
private final class Outcomes: @unchecked Sendable {
    // Unchecked: written and read on the embedded loop, the test's own thread.
    var passes: [Int: ArrivalGate.Pass] = [:]
    var failed: [Int] = []
}
