import DefaultsSyncProtocol
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// A device's WebSocket to the sync service, on SwiftNIO alone, so that no attempt outlives its
/// failure: the connection, TLS and upgrade within one deadline (a server or proxy that accepts
/// the connection and never answers is not waited on for ever), the socket closed whatever the
/// upgrade's outcome (a proxy's `502` leaves no socket behind), and the server's half close taken
/// as its close. (SPI `Testing`: the sync service's tests speak the protocol by hand with it.)
@_spi(Testing) public enum ServiceSocket {
    /// How the server closed the connection.
    public struct CloseFrame: Sendable, Equatable {
        public var code: WebSocketErrorCode
        public var reason: String?
    }

    /// Opens a WebSocket to `endpoint` with `headers`, calls `receive` with each text message in
    /// order (the next is not read until it returns), answers the server's pings and pings it
    /// every `pingInterval`; returns the server's close frame when the connection ends (`nil`
    /// when it ended without one). `opened` is given the writer once the upgrade succeeded.
    ///
    /// - Throws: ``SyncServiceError/timedOut(seconds:)`` when the upgrade took longer than
    ///   `upgradeTimeout` or a ping went unanswered for `pingInterval`;
    ///   ``SyncServiceError/closed(code:reason:)`` when the server declined the upgrade; the
    ///   socket's error when the connection failed.
    public static func connect(
        to endpoint: ServiceEndpoint, headers: HTTPHeaders, tls: TLSConfiguration?, maxMessageBytes: Int,
        upgradeTimeout: Duration, pingInterval: Duration, logger: Logger,
        opened: @escaping @Sendable (Writer) -> Void = { _ in },
        _ receive: @escaping @Sendable (String, Writer) async -> Void
    ) async throws -> CloseFrame? {
        let channel = try await upgrade(
            to: endpoint, headers: headers, tls: tls, maxMessageBytes: maxMessageBytes, within: upgradeTimeout)
        return try await channel.executeThenClose { inbound, outbound in
            let writer = Writer(outbound: outbound, channel: channel.channel)
            opened(writer)
            let close = try await withThrowingTaskGroup(of: Void.self) { group -> CloseFrame? in
                group.addTask {
                    // Ends the connection when a ping is still unanswered at the next.
                    while (try? await Task.sleep(for: pingInterval)) != nil {
                        guard !writer.pingUnanswered.load(ordering: .relaxed) else {
                            writer.pingTimedOut.store(true, ordering: .relaxed)
                            try? await channel.channel.close()
                            return
                        }
                        writer.ping()
                    }
                }
                defer { group.cancelAll() }
                return try await read(inbound, writer: writer, logger: logger, receive)
            }
            if writer.pingTimedOut.load(ordering: .relaxed) {
                throw SyncServiceError.timedOut(seconds: pingInterval.components.seconds)
            }
            return close
        }
    }

    /// Reads frames until the connection ends, and returns the server's close frame.
    private static func read(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, writer: Writer, logger: Logger,
        _ receive: @Sendable (String, Writer) async -> Void
    ) async throws -> CloseFrame? {
        var close: CloseFrame?
        do {
            try await readFrames(inbound, into: &close, writer: writer, logger: logger, receive)
        } catch  where close != nil {
            // The server said why it closed; a reset after that (its close timed out) changes nothing.
        }
        return close
    }

    /// Hands on each message and answers each control frame until the connection ends; `close`
    /// is the server's close frame once it came.
    private static func readFrames(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, into close: inout CloseFrame?, writer: Writer,
        logger: Logger, _ receive: @Sendable (String, Writer) async -> Void
    ) async throws {
        for try await frame in inbound {
            switch frame.opcode {
            case .text where close == nil:
                await receive(String(buffer: frame.unmaskedData), writer)
            case .binary where close == nil:
                logger.warning("The sync service sent a binary message, which this client does not understand")
            case .ping:
                try? await writer.pong(frame.unmaskedData)
            case .pong:
                writer.pingUnanswered.store(false, ordering: .relaxed)
            case .connectionClose where close == nil:
                var data = frame.unmaskedData
                let code = data.readWebSocketErrorCode() ?? .normalClosure
                close = CloseFrame(code: code, reason: data.readString(length: data.readableBytes))
                // Answered, then read on until the server closes the socket (it closes first,
                // so that the wait for late packets is its, not this device's).
                writer.close(code, reason: "")
            default:
                continue
            }
        }
    }

    /// What the connection's users send with.
    public final class Writer: Sendable {
        private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
        private let channel: any Channel
        private let closeSent = Atomic<Bool>(false)
        fileprivate let pingUnanswered = Atomic<Bool>(false)
        fileprivate let pingTimedOut = Atomic<Bool>(false)

        fileprivate init(outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, channel: any Channel) {
            self.outbound = outbound
            self.channel = channel
        }

        /// How long the server has to answer a close frame before the socket is closed.
        static let closeTimeout = TimeAmount.seconds(5)

        /// Sends `text` as one message.
        public func send(_ text: String) async throws {
            try await write(.text, ByteBuffer(string: text))
        }

        /// Starts the close handshake (once; later calls do nothing): the server's answer, or
        /// ``closeTimeout``, ends the connection. Never waits for the socket to take the frame
        /// (a server that reads nothing is the reason to close).
        public func close(_ code: WebSocketErrorCode, reason: String) {
            guard !closeSent.exchange(true, ordering: .relaxed) else { return }
            var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
            data.write(webSocketErrorCode: code)
            data.writeString(reason)
            let channel = channel
            channel.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
            writeNow(.connectionClose, data)
        }

        /// A ping, past what waits to be sent: the pong's timeout holds however full the socket.
        fileprivate func ping() {
            pingUnanswered.store(true, ordering: .relaxed)
            var data = channel.allocator.buffer(capacity: 8)
            data.writeInteger(UInt64.random(in: .min ... .max))
            writeNow(.ping, data)
        }

        private func writeNow(_ opcode: WebSocketOpcode, _ data: ByteBuffer) {
            let frame = WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
            channel.writeAndFlush(frame, promise: nil)
        }

        fileprivate func pong(_ data: ByteBuffer) async throws {
            try await write(.pong, data)
        }

        /// Writes one frame, masked as a client's must be.
        private func write(_ opcode: WebSocketOpcode, _ data: ByteBuffer) async throws {
            try await outbound.write(WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data))
        }
    }

    private final class TimedOut: Sendable {
        let value = Atomic<Bool>(false)
    }

    private enum Upgrade: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case declined
    }

    /// Connects and upgrades within `deadline`, whose end closes the socket; a declined upgrade
    /// closes it too.
    private static func upgrade(
        to endpoint: ServiceEndpoint, headers: HTTPHeaders, tls: TLSConfiguration?, maxMessageBytes: Int,
        within deadline: Duration
    ) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
        let timeout = TimeAmount(deadline)
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        var requestHeaders = headers
        requestHeaders.replaceOrAdd(name: "Host", value: endpoint.hostHeader)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: SyncProtocol.path, headers: requestHeaders)
        let timedOut = TimedOut()
        let upgrade: EventLoopFuture<Upgrade>
        do {
            upgrade = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(timeout)
                .connect(host: endpoint.host, port: endpoint.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let expiry = channel.eventLoop.scheduleTask(in: timeout) {
                            timedOut.value.store(true, ordering: .relaxed)
                            channel.close(promise: nil)
                        }
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: sslContext, serverHostname: endpoint.serverName))
                        }
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                            maxFrameSize: maxMessageBytes,
                            upgradePipelineHandler: { channel, _ in
                                channel.eventLoop.makeCompletedFuture {
                                    try channel.pipeline.syncOperations.addHandler(
                                        NIOWebSocketFrameAggregator(
                                            minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 4096,
                                            maxAccumulatedFrameSize: maxMessageBytes))
                                    return .upgraded(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                                }
                            })
                        var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                            upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                                upgradeRequestHead: head, upgraders: [upgrader],
                                notUpgradingCompletionHandler: { channel in channel.close().map { .declined } }))
                        // A close frame read with the upgrade's answer is the WebSocket's.
                        configuration.leftOverBytesStrategy = .forwardBytes
                        let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                            configuration: configuration)
                        upgraded.whenComplete { _ in expiry.cancel() }
                        return upgraded
                    }
                }
        } catch {
            throw connectionTimedOut(error, deadline: deadline)
        }
        do {
            switch try await upgrade.get() {
            case .upgraded(let channel): return channel
            case .declined:
                throw SyncServiceError.closed(code: nil, reason: "the server declined the upgrade to a WebSocket")
            }
        } catch {
            if timedOut.value.load(ordering: .relaxed) {
                throw SyncServiceError.timedOut(seconds: deadline.components.seconds)
            }
            throw error
        }
    }

    /// A connection that took longer than `deadline`, as the upgrade that did.
    private static func connectionTimedOut(_ error: any Error, deadline: Duration) -> any Error {
        guard case ChannelError.connectTimeout = error else { return error }
        return SyncServiceError.timedOut(seconds: deadline.components.seconds)
    }
}

/// Where the sync service listens, read once from the store's URL.
@_spi(Testing) public struct ServiceEndpoint: Sendable, CustomStringConvertible {
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The scheme, host and port as the URL wrote them.
    public let description: String

    /// `ws://host[:port]` or `wss://host[:port]`, any path, query or user ignored; `nil` for any
    /// other URL.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "ws" || scheme == "wss", let host = components.host, !host.isEmpty
        else { return nil }
        // An IPv6 literal without its brackets.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        usesTLS = scheme == "wss"
        port = components.port ?? (usesTLS ? 443 : 80)
        guard (1...65535).contains(port) else { return nil }
        description = "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")"
    }

    /// The request's `Host`: the host as a URL writes it, and the port.
    var hostHeader: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// The name TLS asks the server's certificate for: none for an IP address.
    var serverName: String? { (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil }
}
