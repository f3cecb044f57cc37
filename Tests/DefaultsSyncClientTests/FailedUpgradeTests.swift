import Defaults
import DefaultsSyncProtocol
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing

@_spi(Testing) @testable import DefaultsSyncClient

/// What a device does when the upgrade to a WebSocket fails: a proxy answering `503` on a
/// connection it keeps open, a server that never answers, one that closes without answering.
/// Each attempt's socket is closed before the next, and no attempt is waited on for ever.
@Suite struct FailedUpgradeTests {
    @Test(.timeLimit(.minutes(2)))
    func aDeclinedUpgradeLeavesNoSocketOpenAndIsTriedAgain() async throws {
        let server = try await UpgradeRefuser(.declines)
        let running = try connection(to: server, responseTimeout: .seconds(20))
        try await waitUntil("five attempts: \(server.accepted)") { server.accepted >= 5 }
        // Every attempt but the one under way closed its socket, which the proxy kept open.
        try await waitUntil("the earlier attempts' sockets closed: \(server.open) open") { server.open <= 1 }
        running.cancel()
        await running.value
        try await server.close()
    }

    @Test(.timeLimit(.minutes(2)))
    func anUpgradeNeverAnsweredEndsAtTheResponseTimeoutAndIsTriedAgain() async throws {
        let server = try await UpgradeRefuser(.neverAnswers)
        let disconnections = Disconnections()
        let running = try connection(to: server, responseTimeout: .seconds(1), disconnections: disconnections)
        try await waitUntil("a second attempt: \(server.accepted)") { server.accepted >= 2 }
        #expect(disconnections.errors.first == .timedOut(seconds: 1), "\(disconnections.errors)")
        try await waitUntil("the first attempt's socket closed: \(server.open) open") { server.open <= 1 }
        running.cancel()
        await running.value
        try await server.close()
    }

    @Test(.timeLimit(.minutes(2)))
    func aServerClosingBeforeItAnswersTheUpgradeIsTriedAgain() async throws {
        let server = try await UpgradeRefuser(.closesAfter(.milliseconds(300)))
        // Far longer than the test: only the server's close can end the attempt.
        let running = try connection(to: server, responseTimeout: .seconds(600))
        try await waitUntil("three attempts: \(server.accepted)") { server.accepted >= 3 }
        running.cancel()
        await running.value
        try await server.close()
    }

    /// A close frame that comes with the upgrade's response (a refused token, on a busy machine)
    /// is read, and ends the attempt with its reason.
    @Test(.timeLimit(.minutes(2)))
    func aCloseFrameComingWithTheUpgradesResponseIsRead() async throws {
        let server = try await ScriptedSyncServer(
            changesAtStart: 0, changesBeforeEachReply: 0, closesAtOnce: (.policyViolation, "token refused"))
        var options = SyncServiceStore.Options()
        options.reconnectDelays = .seconds(600)...(.seconds(600))
        options.responseTimeout = .seconds(600)
        let connection = ServiceConnection(
            endpoint: try #require(ServiceEndpoint(url: server.url)), user: "u", namespace: "com.example.app",
            tokenProvider: { unsignedToken }, description: "refusing server", options: options)
        let disconnections = Disconnections()
        let running = Task {
            await connection.run { event in
                if case .disconnected(let error) = event { disconnections.add(error) }
            }
        }
        try await waitUntil("the refusal: \(disconnections.errors)") { !disconnections.errors.isEmpty }
        #expect(disconnections.errors == [.unauthorized(reason: "token refused")])
        running.cancel()
        await running.value
        try await server.close()
    }

    private func connection(
        to server: UpgradeRefuser, responseTimeout: Duration, disconnections: Disconnections = Disconnections()
    ) throws -> Task<Void, Never> {
        var options = SyncServiceStore.Options()
        options.reconnectDelays = .milliseconds(10)...(.milliseconds(50))
        options.responseTimeout = responseTimeout
        let endpoint = try #require(ServiceEndpoint(url: "ws://127.0.0.1:\(server.port)"))
        let connection = ServiceConnection(
            endpoint: endpoint, user: "u", namespace: "com.example.app", tokenProvider: { unsignedToken },
            description: "refusing server", options: options)
        return Task {
            await connection.run { event in
                if case .disconnected(let error) = event { disconnections.add(error) }
            }
        }
    }
}

/// The errors a connection reported as it ended, in order.
private final class Disconnections: Sendable {
    private let list = Mutex<[SyncServiceError]>([])
    func add(_ error: any Error) { list.withLock { $0.append(error as? SyncServiceError ?? .failed("\(error)")) } }
    var errors: [SyncServiceError] { list.withLock { $0 } }
}

/// A server on loopback that accepts connections and never upgrades them; it counts the
/// connections accepted and those still open.
private final class UpgradeRefuser: Sendable {
    enum Behaviour: Sendable {
        /// Answers `503 Service Unavailable` and keeps the connection open, as a proxy with no
        /// instance behind it does.
        case declines
        /// Reads the request and says nothing.
        case neverAnswers
        /// Reads the request and closes the connection after this long, saying nothing.
        case closesAfter(TimeAmount)
    }

    let port: Int
    private let channel: any Channel
    private let counts: Counts

    final class Counts: Sendable {
        let accepted = Atomic<Int>(0)
        let open = Atomic<Int>(0)
    }

    init(_ behaviour: Behaviour) async throws {
        let counts = Counts()
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(behaviour: behaviour, counts: counts))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.counts = counts
        port = channel.localAddress?.port ?? 0
    }

    var accepted: Int { counts.accepted.load(ordering: .sequentiallyConsistent) }
    var open: Int { counts.open.load(ordering: .sequentiallyConsistent) }

    func close() async throws {
        try await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let behaviour: Behaviour
        let counts: Counts
        private var answered = false

        init(behaviour: Behaviour, counts: Counts) {
            self.behaviour = behaviour
            self.counts = counts
        }

        func channelActive(context: ChannelHandlerContext) {
            counts.accepted.add(1, ordering: .sequentiallyConsistent)
            counts.open.add(1, ordering: .sequentiallyConsistent)
            if case .closesAfter(let delay) = behaviour {
                let channel = context.channel
                context.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
            }
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            counts.open.add(-1, ordering: .sequentiallyConsistent)
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .declines = behaviour, !answered else { return }
            answered = true
            let answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
        }
    }
}
