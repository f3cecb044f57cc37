import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The editor's HTTP server: on 127.0.0.1 only, on a free port (or the one asked for), for as long
/// as the process runs. Every request passes ``RequestGate`` first; what it lets through is
/// answered by ``EditorResponder`` off the event loop (reading and writing files blocks), and the
/// event stream is fed by ``DomainEvents``.
package final class EditorServer: Sendable {
    /// The address a person opens, secret included.
    package let address: String
    package let gate: RequestGate
    package let events: DomainEvents
    private let channel: any Channel

    /// The most connections open at once: a browser opens a few; more is someone else.
    package static let connectionLimit = 64
    /// How long a connection has to send a whole request (from when it opens, or its last answer
    /// was written); an event stream has no such deadline. A browser opens another connection.
    package static let requestTimeout = TimeAmount.seconds(10)
    /// The most requests waiting for an answer at once, over every connection.
    package static let pendingLimit = 32
    /// How long an event stream may stay unable to take more before it is closed: a page that
    /// reads nothing, not one behind for a moment after a large event.
    package static let unreadTimeout = Duration.seconds(10)
    /// How often an event stream is sent a comment, so that a connection gone is noticed.
    package static let keepAliveInterval = TimeAmount.seconds(15)

    package static func start(
        domain: EditedDomain, port: Int = 0, secret: String = RequestGate.makeSecret()
    ) async throws -> EditorServer {
        let events = DomainEvents(domain: domain)
        events.start()
        let responder = EditorResponder(domain: domain)
        let shared = SharedState()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 32)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let gate = shared.gate.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                    let handler = EditorConnection(gate: gate, responder: responder, events: events, shared: shared)
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        guard let boundPort = channel.localAddress?.port else {
            try await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        let gate = RequestGate(secret: secret, port: boundPort)
        shared.gate.withLock { $0 = gate }
        return EditorServer(address: gate.address, gate: gate, events: events, channel: channel, shared: shared)
    }

    private let shared: SharedState

    private init(address: String, gate: RequestGate, events: DomainEvents, channel: any Channel, shared: SharedState) {
        self.address = address
        self.gate = gate
        self.events = events
        self.channel = channel
        self.shared = shared
    }

    /// Returns when the server is closed.
    package func run() async throws {
        try await channel.closeFuture.get()
    }

    package func close() async throws {
        try await channel.close()
    }

    /// Waits for the answer being made, if any: a write under way ends before the process does.
    package func finishWork() {
        shared.work.sync {}
    }

    /// What every connection's handler shares.
    final class SharedState: Sendable {
        let gate = Mutex<RequestGate?>(nil)
        let connections = Atomic<Int>(0)
        let pending = Atomic<Int>(0)
        /// Answers are made one at a time, in order: a write and the read after it see each other.
        let work = DispatchQueue(label: "defaults-edit-server.requests")
    }
}
