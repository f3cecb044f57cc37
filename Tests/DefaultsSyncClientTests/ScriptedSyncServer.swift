import DefaultsSyncProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A stand-in for the sync service on loopback, speaking its protocol over a real WebSocket: it
/// welcomes a device, sends it `changesAtStart` changes, and answers each call behind
/// `changesBeforeEachReply` more, as the service answers behind the changes it queued first.
/// Change `n` is the record `change-<n>` with `seq` n, numbered from 1 across connections; a
/// `records` call is answered with one record per key asked, of value `answer`.
final class ScriptedSyncServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let script: Script

    /// `answersAfter`: the server answers nothing until that many calls came on a connection, then
    /// each in order (as the service answers calls sent without waiting).
    /// `closesAtOnce`: the server closes every connection with this code and reason right after
    /// the upgrade's response, as it refuses a token, instead of welcoming it.
    init(
        changesAtStart: Int, changesBeforeEachReply: Int, answersAfter: Int = 1,
        closesAtOnce: (code: WebSocketErrorCode, reason: String)? = nil
    ) async throws {
        let script = Script(
            atStart: changesAtStart, beforeEachReply: changesBeforeEachReply, answersAfter: answersAfter,
            closesAtOnce: closesAtOnce)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 1 << 20,
                        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(DeviceHandler(script: script))
                            }
                        })
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.channel = channel
        self.script = script
        port = channel.localAddress?.port ?? 0
    }

    /// The URL a `ServiceConnection` connects to.
    var url: String { "ws://127.0.0.1:\(port)\(SyncProtocol.path)" }

    /// The calls answered so far.
    var callsAnswered: Int { script.answered.load(ordering: .sequentiallyConsistent) }

    /// The records pushed so far.
    var recordsPushed: Int { script.pushed.load(ordering: .sequentiallyConsistent) }

    /// Stops listening; connections made end with their clients.
    func close() async throws {
        try await channel.close()
    }

    fileprivate final class Script: Sendable {
        let atStart: Int
        let beforeEachReply: Int
        let answersAfter: Int
        let closesAtOnce: (code: WebSocketErrorCode, reason: String)?
        /// The last change's number.
        let sent = Atomic<Int64>(0)
        let answered = Atomic<Int>(0)
        let pushed = Atomic<Int>(0)

        init(
            atStart: Int, beforeEachReply: Int, answersAfter: Int,
            closesAtOnce: (code: WebSocketErrorCode, reason: String)?
        ) {
            self.atStart = atStart
            self.beforeEachReply = beforeEachReply
            self.answersAfter = answersAfter
            self.closesAtOnce = closesAtOnce
        }
    }
}

/// One device's connection, on its channel's event loop.
private final class DeviceHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let script: ScriptedSyncServer.Script
    /// Calls not answered yet (while fewer than `answersAfter` came).
    private var held: [DeviceMessage] = []
    private var calls = 0

    init(script: ScriptedSyncServer.Script) {
        self.script = script
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if let (code, reason) = script.closesAtOnce {
            var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
            data.write(webSocketErrorCode: code)
            data.writeString(reason)
            return write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), context: context)
        }
        send(ServerMessage(kind: .welcome, latest: 0), context: context)
        sendChanges(script.atStart, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), context: context)
        case .connectionClose:
            write(WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData), context: context)
            context.close(promise: nil)
        case .text:
            let text = String(buffer: frame.unmaskedData)
            guard let message = try? SyncProtocol.decode(DeviceMessage.self, from: text) else { return }
            calls += 1
            held.append(message)
            guard calls >= script.answersAfter else { return }
            for message in held { answer(message, context: context) }
            held = []
        default:
            break
        }
    }

    private func answer(_ message: DeviceMessage, context: ChannelHandlerContext) {
        // Behind the changes sent first: the device reads the answer only once it read them.
        sendChanges(script.beforeEachReply, context: context)
        script.pushed.add(message.records?.count ?? 0, ordering: .sequentiallyConsistent)
        let records = (message.keys ?? []).map { key in
            WireRecord(key: key, value: Data("answer".utf8), wall: 1, counter: 0, origin: "server")
        }
        script.answered.add(1, ordering: .sequentiallyConsistent)
        send(ServerMessage(kind: .reply, id: message.id, records: records), context: context)
    }

    private func sendChanges(_ count: Int, context: ChannelHandlerContext) {
        for _ in 0..<count {
            let seq = script.sent.add(1, ordering: .sequentiallyConsistent).newValue
            let record = WireRecord(
                key: "change-\(seq)", value: Data("\(seq)".utf8), wall: seq, counter: 0, origin: "server", seq: seq)
            send(ServerMessage(kind: .changed, records: [record]), context: context)
        }
    }

    private func send(_ message: ServerMessage, context: ChannelHandlerContext) {
        guard let text = try? SyncProtocol.encode(message) else { return }
        write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)), context: context)
    }

    private func write(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
