import DefaultsSyncProtocol
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Synchronization
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// A device's connection (``DeviceConnection``) with no network and no database: its channel is
/// NIO's testing channel, whose clock the test moves, and its instance a backend of the test's.
/// Every state of the connection, each with its timer: connecting, authenticating, catching up,
/// answering, idle with pings, a ping unanswered, the token expiring, a slow consumer, a hold, a
/// stop and a close.
@Suite struct DeviceConnectionTests {
    static let settings = DeviceConnection.Settings(
        outboxBounds: DeviceOutbox.Bounds(bytes: 1000, hardBytes: 100_000, stall: .seconds(10)),
        pingInterval: .seconds(30))

    @Test func anAdmittedDeviceIsWelcomedThenGetsTheFanOutsChangesInOrder() async throws {
        let device = try await TestDevice()
        #expect(try await device.nextMessage().kind == .welcome)
        // Admitted: the next connection of the loop may arrive.
        #expect(try await device.arriving() == 0)
        for latest in 1...3 {
            device.backend.outbox()?.send(ServerMessage(kind: .changed, latest: Int64(latest)))
        }
        for latest in 1...3 {
            #expect(try await device.nextMessage().latest == Int64(latest))
        }
        #expect(device.backend.calls() == ["admit"])
    }

    @Test func messagesAreAnsweredInOrderOneAtATimeAndNothingMoreIsReadMeanwhile() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        device.backend.holdAnswers()
        try await device.send(id: 1)
        try await device.send(id: 2)
        try await device.requestRead()
        // The first is being answered, the second waits: the socket is not read.
        try await waitUntil { device.backend.answering() == [1] }
        #expect(await device.reads() == 0)
        device.backend.releaseAnswers()
        #expect(try await device.nextMessage().id == 1)
        #expect(try await device.nextMessage().id == 2)
        // Both answered: the read held meanwhile goes through.
        try await waitUntil { await device.reads() == 1 }
    }

    @Test func aRefusedTokenIsClosedWithItsReasonAfterTheRefusalDelay() async throws {
        let device = try await TestDevice(credentials: .refused(.expired, token: nil))
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        #expect(try await device.arriving() == 0, "a refused token's arrival is over at once")
        await device.advance(by: .milliseconds(100))
        let close = try await device.nextClose()
        #expect(close.code == .policyViolation && close.reason == AccessTokenError.expired.description)
        #expect(device.backend.calls().isEmpty)
        try await device.receiveClose()
        #expect(try await device.isClosed())
    }

    @Test func anIdleConnectionIsPingedAndClosedWhenAPingGoesUnanswered() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        await device.advance(by: .seconds(29))
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        await device.advance(by: .seconds(1))
        let ping = try await device.nextFrame()
        #expect(ping.opcode == .ping)
        try await device.channel.writeInbound(WebSocketFrame(fin: true, opcode: .pong, data: ping.data))
        await device.advance(by: .seconds(30))
        #expect(try await device.nextFrame().opcode == .ping)
        // Not answered by the next ping's time.
        await device.advance(by: .seconds(30))
        let close = try await device.nextClose()
        #expect(close.code == .goingAway && close.reason == "ping timeout")
        // The peer does not answer the close frame either: closed after the close timeout.
        await device.advance(by: .seconds(1))
        #expect(try await device.isClosed())
        try await waitUntil { device.backend.calls() == ["admit", "leave"] }
    }

    @Test func aSilentConnectionIsClosedWhenItsTokenExpires() async throws {
        // Wide of the wall clock's seconds: a busy machine takes seconds to set the test up.
        let expires = Int64(Date().timeIntervalSince1970) + 60
        let device = try await TestDevice(refusedFrom: expires)
        _ = try await device.nextMessage()
        await device.advance(by: .seconds(45))
        // Pinged meanwhile, and nothing else.
        #expect(try await device.nextFrame().opcode == .ping)
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        await device.advance(by: .seconds(16))
        let close = try await device.nextClose()
        #expect(close.code == .policyViolation)
        #expect(SyncCloseReason(closeReason: close.reason) == .tokenExpired, "\(close.reason)")
    }

    @Test func aMessageAfterTheTokenExpiredIsNotAnsweredAndClosesTheConnection() async throws {
        // Expired as the connection opens, and the clock does not move: the message, not the
        // wheel's deadline, finds the token expired.
        let device = try await TestDevice(refusedFrom: Int64(Date().timeIntervalSince1970) - 1)
        _ = try await device.nextMessage()
        try await device.send(id: 1)
        let close = try await device.nextClose()
        #expect(SyncCloseReason(closeReason: close.reason) == .tokenExpired)
        #expect(device.backend.answering().isEmpty)
    }

    @Test func aConnectionThatTakesNothingWhileChangesWaitIsClosedAsASlowConsumer() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        device.channel.isWritable = false
        device.backend.outbox()?.send(ServerMessage(kind: .changed, latest: 1))
        await device.advance(by: .seconds(9))
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        await device.advance(by: .seconds(3))
        let close = try await device.nextClose()
        #expect(close.code == .unknown(1013))
        #expect(SyncCloseReason(closeReason: close.reason) == .slowConsumer)
        #expect(SyncCloseReason.retryAfter(closeReason: close.reason) == .seconds(7))
        #expect(device.backend.calls() == ["admit", "slow consumer"])
    }

    @Test func aDeviceRefusedForComingBackTooSoonIsHeldThenToldToWait() async throws {
        let text = SyncCloseReason.tryAgainLater.text(retryAfter: .seconds(3), "closed as a slow consumer lately")
        let device = try await TestDevice(admission: .refused(.tryAgainLater, text: text, holdFor: .seconds(3)))
        // Held: what it sends is read and dropped, and nothing is answered.
        try await device.send(id: 1)
        await device.advance(by: .seconds(2))
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        #expect(device.backend.calls() == ["admit"])
        await device.advance(by: .seconds(1))
        let close = try await device.nextClose()
        #expect(close.code == .unknown(1013) && close.reason == text)
        #expect(device.backend.calls() == ["admit", "end hold"])
    }

    @Test func pingsWhileTheSocketTakesNothingAreOwedOnePongForTheLast() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        device.channel.isWritable = false
        for ping in 0..<100 {
            var data = ByteBuffer()
            data.writeInteger(UInt32(ping))
            try await device.channel.writeInbound(WebSocketFrame(fin: true, opcode: .ping, data: data))
        }
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        device.channel.isWritable = true
        device.channel.pipeline.fireChannelWritabilityChanged()
        let pong = try await device.nextFrame()
        #expect(pong.opcode == .pong && pong.data.getInteger(at: pong.data.readerIndex, as: UInt32.self) == 99)
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
    }

    @Test func aDeviceThatHangsUpWithoutACloseFrameLeaves() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        device.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try await device.isClosed())
        try await waitUntil { device.backend.calls() == ["admit", "leave"] }
    }

    @Test func anAdmissionThatDoesNotComeInTimeIsAbandonedAndToldToTryAgain() async throws {
        let device = try await TestDevice(admission: nil)
        try await waitUntil { device.backend.calls() == ["admit"] }
        await device.advance(by: .seconds(29))
        #expect(try await device.channel.readOutbound(as: WebSocketFrame.self) == nil)
        #expect(try await device.arriving() == 1, "still arriving while its admission is awaited")
        await device.advance(by: .seconds(1))
        let close = try await device.nextClose()
        #expect(close.code == .unknown(1013) && SyncCloseReason(closeReason: close.reason) == .tryAgainLater)
        try await waitUntil { device.backend.calls() == ["admit", "admission cancelled"] }
        #expect(try await device.arriving() == 0, "an abandoned admission ends the arrival")
        await device.advance(by: .seconds(1))
        #expect(try await device.isClosed())
    }

    @Test func theDevicesCloseIsEchoedAndItLeavesOnce() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        try await device.receiveClose(code: .normalClosure)
        let close = try await device.nextClose()
        #expect(close.code == .normalClosure)
        #expect(try await device.isClosed())
        try await waitUntil { device.backend.calls() == ["admit", "leave"] }
    }

    @Test func aStoppingServerClosesEachConnectionNormally() async throws {
        let device = try await TestDevice()
        _ = try await device.nextMessage()
        device.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        let close = try await device.nextClose()
        #expect(close.code == .normalClosure && close.reason == "the server is stopping")
        try await device.receiveClose()
        #expect(try await device.isClosed())
    }

    @Test func theWheelWakesEachDeadlineOnceAndNeverEarly() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let log = Mutex<[Int: [TimeAmount]]>([:])
        let start = loop.now
        // Within a turn of the wheel, beyond one turn and two, and one deadline superseded.
        let delays: [TimeAmount] = [.milliseconds(150), .seconds(2), .seconds(60), .seconds(120)]
        let kept = try await loop.executeInContext {
            let wheel = TimerWheel(eventLoop: loop)
            let probes = (0...delays.count).map { id in
                WheelProbe { now in log.withLock { $0[id, default: []].append(now - start) } }
            }
            for (probe, delay) in zip(probes, delays) { wheel.schedule(probe, at: start + delay) }
            wheel.schedule(probes[delays.count], at: start + .milliseconds(500))
            wheel.schedule(probes[delays.count], at: start + .seconds(5))
            return NIOLoopBound((wheel, probes), eventLoop: loop)
        }
        for _ in 0..<1_300 { await loop.advanceTime(by: TimerWheel.tick) }
        let woken = log.withLock { $0 }
        for (id, delay) in (delays + [.seconds(5)]).enumerated() {
            let times = woken[id] ?? []
            #expect(times.count == 1, "\(id): \(times)")
            #expect(times.allSatisfy { $0 >= delay && $0 < delay + TimerWheel.tick * 2 }, "\(id): \(times)")
        }
        _ = kept
        await loop.shutdownGracefully()
    }
}

/// A wheel's client that tells when it was woken.
private final class WheelProbe: TimerWheelClient {
    var wheelMark = 0
    let woken: (NIODeadline) -> Void

    init(_ woken: @escaping (NIODeadline) -> Void) {
        self.woken = woken
    }

    func deadlineCame(now: NIODeadline) {
        woken(now)
    }
}

/// One connection under test: the handler on a testing channel, a backend that records calls.
private struct TestDevice {
    let channel: NIOAsyncTestingChannel
    let backend: RecordingBackend
    let counter: ReadCounter
    /// The gate the connection came through, one arrival at a time.
    let gate: NIOLoopBound<ArrivalGate>

    /// `admission` `nil`: the backend never admits the device (until cancelled).
    init(
        credentials: DeviceConnection.Credentials? = nil, refusedFrom: Int64? = nil,
        admission: Admission? = .admitted
    ) async throws {
        let claims = TokenClaims(user: "u", namespace: "n", expires: Int64(Date().timeIntervalSince1970) + 3600)
        let credentials =
            credentials ?? .verified(claims, refusedFrom: refusedFrom ?? Int64(Date().timeIntervalSince1970) + 3600)
        channel = NIOAsyncTestingChannel()
        backend = RecordingBackend(admission: admission)
        counter = ReadCounter()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        let (channel, backend, counter) = (channel, backend, counter)
        gate = try await channel.testingEventLoop.executeInContext {
            let gate = ArrivalGate(eventLoop: channel.eventLoop, limit: 1)
            // The first to ask: through at once.
            var pass: ArrivalGate.Pass?
            gate.enter(channel, user: "u").assumeIsolated().whenSuccess { pass = $0 }
            guard let pass else { throw ChannelError.inappropriateOperationForState }
            let connection = DeviceConnection(
                credentials: credentials, arrival: pass, client: ClientAddress(channel: channel, forwardedFor: nil),
                backend: backend,
                settings: DeviceConnectionTests.settings, wheel: TimerWheel(eventLoop: channel.eventLoop),
                metrics: ServerMetrics(), logger: Logger(label: "test"))
            try channel.pipeline.syncOperations.addHandler(counter)
            try channel.pipeline.syncOperations.addHandler(connection)
            return NIOLoopBound(gate, eventLoop: channel.eventLoop)
        }
    }

    /// The connections arriving through the gate: 1 until this one's admission ended, then 0.
    func arriving() async throws -> Int {
        try await channel.testingEventLoop.executeInContext { gate.value.arriving }
    }

    /// Moves the channel's clock by `amount`, a tick at a time, as the loop's own time would go.
    func advance(by amount: TimeAmount) async {
        var left = amount
        while left > .zero {
            let step = min(left, TimerWheel.tick)
            await channel.testingEventLoop.advanceTime(by: step)
            left = left - step
        }
    }

    func send(id: Int) async throws {
        let message = DeviceMessage(id: id, kind: .changes)
        try await channel.writeInbound(
            WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: try SyncProtocol.encode(message))))
    }

    /// Asks for a read, as NIO does when the socket may be read again.
    func requestRead() async throws {
        try await channel.testingEventLoop.executeInContext { channel.pipeline.read() }
    }

    func reads() async -> Int { counter.count.load(ordering: .relaxed) }

    func nextFrame() async throws -> WebSocketFrame {
        try await withTimeout("a frame", timeout: .seconds(30)) {
            try await channel.waitForOutboundWrite(as: WebSocketFrame.self)
        }
    }

    func nextMessage() async throws -> ServerMessage {
        let frame = try await nextFrame()
        #expect(frame.opcode == .text && frame.fin)
        return try SyncProtocol.decode(ServerMessage.self, from: String(buffer: frame.data))
    }

    func nextClose() async throws -> (code: WebSocketErrorCode?, reason: String) {
        var frame = try await nextFrame()
        while frame.opcode != .connectionClose { frame = try await nextFrame() }
        var data = frame.data
        let code = data.readWebSocketErrorCode()
        return (code, data.readString(length: data.readableBytes) ?? "")
    }

    /// The device sends its close frame.
    func receiveClose(code: WebSocketErrorCode = .normalClosure) async throws {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
    }

    func isClosed() async throws -> Bool {
        try await withTimeout("the channel to close", timeout: .seconds(30)) {
            try await channel.closeFuture.get()
        }
        return !channel.isActive
    }
}

/// Counts the reads that reach the socket.
private final class ReadCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = WebSocketFrame
    let count = Atomic<Int>(0)

    func read(context: ChannelHandlerContext) {
        count.add(1, ordering: .relaxed)
        context.read()
    }
}

/// The instance as the test plays it: admits as told (queuing a welcome), answers each message with
/// its id (held while the test says so), and records what it was asked.
private final class RecordingBackend: ConnectionBackend {
    private struct State {
        var calls: [String] = []
        var outbox: DeviceOutbox?
        var answering: [Int] = []
        var held: [CheckedContinuation<Void, Never>]? = nil
    }

    private let state = Mutex(State())
    private let admission: Admission?

    init(admission: Admission?) {
        self.admission = admission
    }

    func calls() -> [String] { state.withLock { $0.calls } }
    func outbox() -> DeviceOutbox? { state.withLock { $0.outbox } }
    func answering() -> [Int] { state.withLock { $0.answering } }
    func holdAnswers() { state.withLock { $0.held = [] } }

    func releaseAnswers() {
        let waiting = state.withLock { state in
            defer { state.held = nil }
            return state.held ?? []
        }
        for waiter in waiting { waiter.resume() }
    }

    func admit(_ outbox: DeviceOutbox, claims: TokenClaims, client: ClientAddress) async -> Admission {
        state.withLock {
            $0.calls.append("admit")
            $0.outbox = outbox
        }
        guard let admission else {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            state.withLock { $0.calls.append("admission cancelled") }
            return .refused(.tryAgainLater, text: "cancelled")
        }
        if admission == .admitted { outbox.send(ServerMessage(kind: .welcome, latest: 0)) }
        return admission
    }

    func answer(_ text: String?, claims: TokenClaims) async -> ServerMessage {
        let id = text.flatMap { try? SyncProtocol.decode(DeviceMessage.self, from: $0) }?.id ?? -1
        await withCheckedContinuation { continuation in
            let wait = state.withLock { state -> Bool in
                state.answering.append(id)
                guard state.held != nil else { return false }
                state.held?.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
        return ServerMessage(kind: .reply, id: id)
    }

    func endHold(claims: TokenClaims) { state.withLock { $0.calls.append("end hold") } }
    func leave(_ outbox: DeviceOutbox, claims: TokenClaims) async { state.withLock { $0.calls.append("leave") } }

    func closedAsSlowConsumer(_ claims: TokenClaims) -> Duration {
        state.withLock { $0.calls.append("slow consumer") }
        return .seconds(7)
    }
}
