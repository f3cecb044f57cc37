import DefaultsSyncProtocol
import Foundation
import HTTPTypes
import Logging
import NIOWebSocket
import TestSupport
import WSClient

/// A WebSocket client speaking the protocol by hand, for what `SyncServiceStore` never sends.
enum RawDevice {
    struct Closed: Sendable {
        var code: WebSocketErrorCode?
        var reason: String?
        var messages: [ServerMessage]
    }

    /// Connects with `token` (no header when `nil`), runs `body`, and returns how the server closed
    /// the connection with the messages `body` returned; throws `WaitTimeout` when that has not
    /// happened by `deadline`.
    static func connect(
        _ url: String, token: String?, maxFrameSize: Int = 1 << 24, deadline: Duration = .seconds(60),
        _ body: @escaping @Sendable (WebSocketInboundStream, WebSocketOutboundWriter) async throws -> [ServerMessage]
    ) async throws -> Closed {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        let messages = MessagesBox()
        let configuration = WebSocketClientConfiguration(maxFrameSize: maxFrameSize, additionalHeaders: headers)
        let close = try await withTimeout("the connection to end", timeout: deadline) {
            try await WebSocketClient.connect(
                url: url + SyncProtocol.path, configuration: configuration, logger: Logger(label: "raw-device")
            ) { inbound, outbound, _ in
                messages.set(try await body(inbound, outbound))
            }.map { Close(code: $0.closeCode, reason: $0.reason) } ?? Close(code: nil, reason: nil)
        }
        return Closed(code: close.code, reason: close.reason, messages: messages.get())
    }

    private struct Close: Sendable {
        var code: WebSocketErrorCode?
        var reason: String?
    }

    /// Every message until the server closes the connection.
    static func messages(_ inbound: WebSocketInboundStream) async throws -> [ServerMessage] {
        var messages: [ServerMessage] = []
        for try await message in inbound.messages(maxSize: 1 << 24) {
            if case .text(let text) = message {
                messages.append(try SyncProtocol.decode(ServerMessage.self, from: text))
            }
        }
        return messages
    }

    /// The next message.
    static func next(_ iterator: inout WebSocketInboundMessageStream.AsyncIterator) async throws -> ServerMessage? {
        guard case .text(let text) = try await iterator.next() else { return nil }
        return try SyncProtocol.decode(ServerMessage.self, from: text)
    }
}

final class MessagesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [ServerMessage] = []
    func set(_ messages: [ServerMessage]) { lock.withLock { self.messages = messages } }
    func get() -> [ServerMessage] { lock.withLock { messages } }
}
