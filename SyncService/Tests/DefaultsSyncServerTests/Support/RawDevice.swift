@_spi(Testing) import DefaultsSyncClient
import DefaultsSyncProtocol
import Foundation
import Logging
import NIOHTTP1
import NIOWebSocket
import TestSupport

/// A WebSocket client speaking the protocol by hand, for what `SyncServiceStore` never sends: the
/// store's own connection (`ServiceSocket`), driven by the test.
enum RawDevice {
    struct Closed: Sendable {
        var code: WebSocketErrorCode?
        var reason: String?
        var messages: [ServerMessage]
    }

    /// A message of the server's, as the test reads it.
    enum Message: Sendable {
        case text(String)
    }

    /// The server's messages; the connection reads the next from its socket only once the test
    /// took the one before, so a test that stops reading is a device that stops reading.
    struct Inbound: Sendable {
        fileprivate let buffer: BoundedBuffer<String>

        /// The messages until the server closes the connection (`maxSize` is the connection's).
        func messages(maxSize: Int) -> Messages { Messages(buffer: buffer) }
    }

    struct Messages: AsyncSequence, Sendable {
        fileprivate let buffer: BoundedBuffer<String>

        struct AsyncIterator: AsyncIteratorProtocol {
            fileprivate let buffer: BoundedBuffer<String>

            mutating func next() async throws -> Message? {
                await buffer.next().map(Message.text)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer) }
    }

    struct Outbound: Sendable {
        fileprivate let writer: ServiceSocket.Writer

        func write(_ message: Message) async throws {
            guard case .text(let text) = message else { return }
            try await writer.send(text)
        }

        func close(_ code: WebSocketErrorCode, reason: String?) async throws {
            writer.close(code, reason: reason ?? "")
        }
    }

    /// Connects with `token` (no header when `nil`), runs `body`, closes the connection normally
    /// if the server has not, and returns how the server closed it with the messages `body`
    /// returned; throws what `body` threw, or `WaitTimeout` when the connection has not ended by
    /// `deadline`.
    static func connect(
        _ url: String, token: String?, maxFrameSize: Int = 1 << 24, deadline: Duration = .seconds(60),
        _ body: @escaping @Sendable (Inbound, Outbound) async throws -> [ServerMessage]
    ) async throws -> Closed {
        guard let endpoint = ServiceEndpoint(url: url) else { throw SyncServiceError.invalidURL(url) }
        let headers = HTTPHeaders(token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        return try await withTimeout("the connection to end", timeout: deadline) {
            try await withThrowingTaskGroup(of: ServiceSocket.CloseFrame?.self) { group in
                let buffer = BoundedBuffer<String>(capacity: 1)
                let (opened, open) = AsyncStream<ServiceSocket.Writer>.makeStream()
                group.addTask {
                    defer {
                        buffer.finish()
                        open.finish()
                    }
                    return try await ServiceSocket.connect(
                        to: endpoint, headers: headers, tls: nil, maxMessageBytes: maxFrameSize,
                        upgradeTimeout: deadline, pingInterval: .seconds(3600), logger: Logger(label: "raw-device"),
                        opened: { open.yield($0) }
                    ) { text, _ in _ = await buffer.send(text) }
                }
                var messages: [ServerMessage] = []
                var thrown: (any Error)?
                var writers = opened.makeAsyncIterator()
                if let writer = await writers.next() {
                    do {
                        messages = try await body(Inbound(buffer: buffer), Outbound(writer: writer))
                    } catch {
                        thrown = error
                    }
                    // What the test did not read is read and dropped until the server closes.
                    buffer.finish()
                    writer.close(thrown == nil ? .normalClosure : .unexpectedServerError, reason: "")
                }
                // The test's own failure first: the connection's may follow from it.
                let ended: Result<ServiceSocket.CloseFrame?, any Error>
                do {
                    ended = .success(try await group.next() ?? nil)
                } catch {
                    ended = .failure(error)
                }
                if let thrown { throw thrown }
                let close = try ended.get()
                return Closed(code: close?.code, reason: close?.reason, messages: messages)
            }
        }
    }

    /// Every message until the server closes the connection.
    static func messages(_ inbound: Inbound) async throws -> [ServerMessage] {
        var messages: [ServerMessage] = []
        for try await message in inbound.messages(maxSize: 1 << 24) {
            if case .text(let text) = message {
                messages.append(try SyncProtocol.decode(ServerMessage.self, from: text))
            }
        }
        return messages
    }

    /// The next message.
    static func next(_ iterator: inout Messages.AsyncIterator) async throws -> ServerMessage? {
        guard case .text(let text) = try await iterator.next() else { return nil }
        return try SyncProtocol.decode(ServerMessage.self, from: text)
    }
}
