import Foundation

/// A TCP connection to a loopback port, for what no HTTP or WebSocket client does: connecting
/// and sending nothing.
final class LoopbackSocket {
    let descriptor: Int32

    /// Connects, or returns `nil` when nothing accepts on `port`.
    init?(port: Int) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        // Returning nil after every property is set runs `deinit`, which closes the socket.
        guard connected else { return nil }
    }

    /// Whether the peer closed the connection (a read ends or is reset) within `limit`.
    func waitForClose(within limit: Duration) -> Bool {
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count == 0 { return true }
            if count < 0, errno == EINTR { continue }
            return count < 0 && errno == ECONNRESET
        }
    }

    deinit { close(descriptor) }
}
