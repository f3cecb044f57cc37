import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import TestSupport
import Testing

/// A connection that has not completed its request within `--idle-timeout` is closed, whatever it
/// sends; one that became a WebSocket is not.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct DeadlineTests {
    @Test(.timeLimit(.minutes(2)))
    func connectionsSendingOnlyBlankLinesAreAllClosed() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--idle-timeout", "1"])
        let sockets = try (0..<20).map { _ in try #require(LoopbackSocket(port: server.port)) }
        // The HTTP parser skips empty lines before a request: blank lines, again and again, never
        // make one, and must not keep the connection either.
        try await waitUntil("every socket sending blank lines to be closed", timeout: .seconds(60)) {
            for socket in sockets where !socket.isClosedByPeer {
                socket.send(Array("\r\n\r\n".utf8))
            }
            return sockets.allSatisfy(\.isClosedByPeer)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aConnectionTricklingItsRequestIsClosed() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--idle-timeout", "1"])
        let socket = try #require(LoopbackSocket(port: server.port))
        let request = Array("GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ".utf8)
        var sent = 0
        try await waitUntil("the trickling connection to be closed", timeout: .seconds(60)) {
            socket.send([sent < request.count ? request[sent] : UInt8(ascii: "a")])
            sent += 1
            return socket.isClosedByPeer
        }
    }

    /// A request promising a body it never sends, from a device with a valid token, never reaches
    /// the arrival gate (the upgrade waits for the whole request): with one arrival at a time
    /// per event loop, a device behind eight of them is still welcomed at once.
    @Test(.timeLimit(.minutes(2)))
    func requestsThatNeverEndHoldNoTurnToArrive() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--idle-timeout", "120", "--arriving-connections", "1"])
        let stalled = try await key.token(user: "stalling")
        let request =
            "GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Authorization: Bearer \(stalled)\r\nContent-Length: 5\r\n\r\n"
        let sockets = try (0..<8).map { _ in try #require(LoopbackSocket(port: server.port)) }
        for socket in sockets { socket.send(Array(request.utf8)) }
        try await Task.sleep(for: .milliseconds(500))
        let token = try await key.token(user: "arriving")
        let closed = try await RawDevice.connect(server.url, token: token, deadline: .seconds(20)) {
            inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            let welcome = try await RawDevice.next(&iterator)
            try await outbound.close(.normalClosure, reason: nil)
            return [welcome].compactMap { $0 }
        }
        #expect(closed.messages.first?.kind == .welcome, "\(closed)")
        #expect(sockets.allSatisfy { !$0.isClosedByPeer }, "the stalled requests are still within their deadline")
    }

    @Test(.timeLimit(.minutes(2)))
    func aWebSocketOutlivesTheRequestDeadline() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--idle-timeout", "1"])
        let token = try await key.token(user: "deadline-websocket")
        let closed = try await RawDevice.connect(server.url, token: token) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            var messages = [try await RawDevice.next(&iterator)].compactMap { $0 }
            // Three deadlines later, the connection still answers.
            try await Task.sleep(for: .seconds(3))
            try await outbound.write(.text(try SyncProtocol.encode(DeviceMessage(id: 1, kind: .stamps))))
            if let reply = try await RawDevice.next(&iterator) { messages.append(reply) }
            try await outbound.close(.normalClosure, reason: nil)
            return messages
        }
        #expect(closed.messages.map(\.kind) == [.welcome, .reply], "\(closed.messages)")
    }
}

extension LoopbackSocket {
    /// Sends `bytes`, ignoring a connection the peer closed (no SIGPIPE).
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Whether the peer closed the connection (an end of input or a reset), looking without
    /// waiting; what the peer sent meanwhile is read and dropped.
    var isClosedByPeer: Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count == 0 { return true }
            if count > 0 { continue }
            if errno == EINTR { continue }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }
    }

    /// Whether the peer closes the connection within `limit`, reading (and dropping) whatever it
    /// sent before.
    func drainUntilClosed(within limit: Duration) -> Bool {
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return true }
            if count > 0 { continue }
            if errno == EINTR { continue }
            return errno == ECONNRESET
        }
    }
}
