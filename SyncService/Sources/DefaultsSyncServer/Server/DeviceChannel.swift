import DefaultsSyncProtocol
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import Synchronization

/// The devices' port, as SwiftNIO handlers alone: HTTP/1 for `GET /health` (``HealthResponder``)
/// and the upgrade of `/v1/sync` to a WebSocket, whose token is verified before the upgrade; then
/// a ``DeviceConnection``. Each connection is its pipeline and nothing else: ``handle(value:logger:)``
/// returns at once, so no task waits for a connection, idle or not. The server's graceful stop
/// reaches the connections as NIO's `ChannelShouldQuiesceEvent`.
struct DeviceChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let tokens: AccessTokens
    let backend: any ConnectionBackend
    let settings: DeviceConnection.Settings
    /// The largest message a device may send, whole or in fragments.
    let messageBytes: Int
    /// How long a client has to send a whole request (``RequestDeadlineHandler``).
    let requestDeadline: TimeAmount
    let tls: NIOSSLContext?
    let wheels: EventLoopLocal<TimerWheel>
    /// The connections arriving at once on each loop (``ArrivalGate``).
    let arrivals: EventLoopLocal<ArrivalGate>
    let health: @Sendable () async -> (healthy: Bool, body: String)
    let metrics: ServerMetrics
    let logger: Logger

    /// The socket's send buffer, fixed (Linux doubles it for its own bookkeeping): without it, the
    /// kernel's autotuning lets a peer that reads nothing park up to 4 MB there per connection, and
    /// the server answers that many more of its requests before the outbox holds any of them.
    static let socketSendBufferBytes = 256 * 1024

    /// What a connection reads into. SwiftNIO keeps a connection's read buffers for its next reads,
    /// as many as it reads in a row (``readsInARow``), so an idle device holds them: one, small at
    /// first (an upgrade request or most devices' messages fit); after a read that fills it, the
    /// next is twice as large, up to 64 KB.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 256, initial: 512, maximum: 65_536)
    /// Reads of a connection in one turn of its event loop. NIO's default, 4, let each connection
    /// keep up to four read buffers (one for each read while a message of the one before was still
    /// being answered); a busy device is read again on the loop's next turn.
    static let readsInARow: UInt = 1

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // NIO's defaults let each idle connection keep up to four buffers of 2 KB.
            try channel.syncOptions?.setOption(.recvAllocator, value: Self.receiveBuffers)
            try channel.syncOptions?.setOption(.maxMessagesPerRead, value: Self.readsInARow)
            let pipeline = channel.pipeline.syncOperations
            if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
            // After the TLS handler: a TLS handshake counts against the deadline.
            try pipeline.addHandler(
                RequestDeadlineHandler(deadline: requestDeadline), name: RequestDeadlineHandler.name)
            let credentials = NIOLoopBoundBox<DeviceConnection.Credentials?>(nil, eventLoop: channel.eventLoop)
            let upgrader = NIOWebSocketServerUpgrader(
                maxFrameSize: messageBytes, automaticErrorHandling: true,
                shouldUpgrade: { channel, head in verify(head, on: channel, into: credentials) },
                upgradePipelineHandler: { channel, head in
                    arrive(channel, head: head, credentials: credentials.value)
                })
            try pipeline.configureHTTPServerPipeline(
                withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }), withErrorHandling: true)
            try pipeline.addHandler(HealthResponder(check: health), name: HealthResponder.name)
            return Value(channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {}

    /// Upgrades every request for ``SyncProtocol/path``, its token verified or not, so that a
    /// refused device reads why in the close frame; leaves any other to ``HealthResponder``.
    private func verify(
        _ head: HTTPRequestHead, on channel: any Channel,
        into found: NIOLoopBoundBox<DeviceConnection.Credentials?>
    ) -> EventLoopFuture<HTTPHeaders?> {
        guard head.uri.split(separator: "?", omittingEmptySubsequences: false).first == Substring(SyncProtocol.path)
        else { return channel.eventLoop.makeSucceededFuture(nil) }
        let token = head.headers["authorization"].first { $0.hasPrefix("Bearer ") }.map {
            String($0.dropFirst("Bearer ".count))
        }
        let tokens = tokens
        return channel.eventLoop.makeFutureWithTask { () -> DeviceConnection.Credentials in
            guard let token else { return .refused(.missing, token: nil) }
            do throws(AccessTokenError) {
                let claims = try await tokens.verify(token)
                return .verified(claims, refusedFrom: tokens.policy.refusedFrom(claims))
            } catch {
                return .refused(error, token: token)
            }
        }.map { credentials in
            found.value = credentials
            return HTTPHeaders()
        }
    }

    /// Once the whole request is in and answered: a verified device waits its turn at the loop's
    /// ``ArrivalGate`` (so that only the instance's own work holds a turn, never a client's bytes),
    /// reading nothing meanwhile, then becomes a ``DeviceConnection``; a refused one becomes one at
    /// once, to be told why.
    private func arrive(
        _ channel: any Channel, head: HTTPRequestHead, credentials: DeviceConnection.Credentials?
    ) -> EventLoopFuture<Void> {
        guard case .verified(let claims, _)? = credentials else {
            return channel.eventLoop.makeCompletedFuture {
                try becomeWebSocket(channel, head: head, credentials: credentials, arrival: nil)
            }
        }
        // What a device sends while it waits stays in the socket, not in the upgrade's buffer; its
        // `DeviceConnection` reads again once admitted.
        _ = channel.setOption(.autoRead, value: false)
        do {
            try channel.pipeline.syncOperations.addHandler(
                WaitingArrival(), name: WaitingArrival.name, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return arrivals.value(for: channel.eventLoop).enter(channel, user: claims.user).flatMapThrowing { pass in
            _ = channel.pipeline.syncOperations.removeHandler(name: WaitingArrival.name)
            try becomeWebSocket(channel, head: head, credentials: credentials, arrival: pass)
        }
    }

    /// After the upgrade's response: the request's deadline and the HTTP handler go, the device's
    /// connection comes.
    private func becomeWebSocket(
        _ channel: any Channel, head: HTTPRequestHead, credentials: DeviceConnection.Credentials?,
        arrival: ArrivalGate.Pass?
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        // A WebSocket now: the pings and the device's outbox judge it.
        _ = pipeline.removeHandler(name: RequestDeadlineHandler.name)
        _ = pipeline.removeHandler(name: HealthResponder.name)
        _ = channel.setOption(.socketOption(.so_sndbuf), value: Self.socketSendBufferBytes)
        try pipeline.addHandler(
            NIOWebSocketFrameAggregator(
                minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 4096, maxAccumulatedFrameSize: messageBytes))
        try pipeline.addHandler(
            DeviceConnection(
                credentials: credentials ?? .refused(.missing, token: nil), arrival: arrival,
                client: ClientAddress(channel: channel, forwardedFor: head.headers["x-forwarded-for"].first),
                backend: backend, settings: settings, wheel: wheels.value(for: channel.eventLoop), metrics: metrics,
                logger: logger))
    }
}

/// Closes a connection waiting at the ``ArrivalGate`` when its device hangs up (a half close, which
/// the server allows, would otherwise leave it queued) or the server stops (its
/// `DeviceConnection`, not there yet, would close it then); first in the pipeline while it waits.
final class WaitingArrival: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    static let name = "waiting-arrival"

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent || (event as? ChannelEvent) == .inputClosed {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
