import Foundation

/// A device of the sync protocol spoken over a bare loopback socket, for what `SyncServiceStore`
/// never does (P14's devices that never read, P19's that ask without pause): the upgrade with a
/// token, masked text frames, and the server's frames read back.
enum RawWebSocket {
    /// A TCP connection to the loopback `port`; with `receiveBuffer`, a receive buffer that small,
    /// so that the kernel takes little of what the server sends before the server's own buffers
    /// fill (with the default, loopback's autotuning lets the kernel hold tens of megabytes).
    static func connected(to port: Int, receiveBuffer: Int32? = nil) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        if var size = receiveBuffer {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(socket)
            return nil
        }
        return socket
    }

    static func send(_ bytes: [UInt8], to socket: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// POLLRDHUP: the peer closed its side, even with unread data before the end.
    static let peerClosed = Int16(0x2000)

    /// Whether the peer closed or reset the connection, whatever it sent that was not read.
    static func isClosed(_ socket: Int32) -> Bool {
        var descriptor = pollfd(fd: socket, events: peerClosed, revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return descriptor.revents & (peerClosed | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    static func upgradeRequest(token: String) -> [UInt8] {
        Array(
            ("GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n").utf8)
    }

    /// One final text frame of `text`, masked as a client's must be.
    static func maskedTextFrame(_ text: String) -> [UInt8] {
        maskedFrame(opcode: 0x1, Array(text.utf8))
    }

    static func maskedFrame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xffff {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    /// A connection that reads what the server sends, a message at a time, keeping only the
    /// start of each: enough to tell its kind, not a 1,000-record page to decode.
    final class Reader {
        enum Message {
            /// A text message's first bytes (its JSON keys are sorted: `kind` comes early).
            case text(head: String)
            /// A close frame and its reason.
            case closed(reason: String)
        }

        let socket: Int32
        private var buffer: [UInt8] = []
        private var start = 0
        private var chunk = [UInt8](repeating: 0, count: 65_536)
        private let keep: Int
        private let shouldGoOn: () -> Bool

        /// Reads `socket` with a short timeout, so that `shouldGoOn` is asked often.
        init(socket: Int32, keep: Int = 512, shouldGoOn: @escaping () -> Bool) {
            self.socket = socket
            self.keep = keep
            self.shouldGoOn = shouldGoOn
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        /// The upgrade's answer: whether the server switched protocols.
        func upgraded() -> Bool {
            while true {
                let bytes = buffer[start...]
                if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                    start = end.upperBound
                    return head.hasPrefix("HTTP/1.1 101")
                }
                guard fill() else { return false }
            }
        }

        /// The next message (pings answered on the way); `nil` when the connection ended or
        /// `shouldGoOn` said stop.
        func next() -> Message? {
            var head: [UInt8] = []
            while true {
                guard let (opcode, fin, payload) = frame() else { return nil }
                switch opcode {
                case 0x8:
                    return .closed(reason: String(decoding: payload.dropFirst(2), as: UTF8.self))
                case 0x9:
                    RawWebSocket.send(RawWebSocket.maskedFrame(opcode: 0xA, Array(payload)), to: socket)
                case 0xA:
                    break
                default:
                    head += payload.prefix(keep - head.count)
                    if fin { return .text(head: String(decoding: head, as: UTF8.self)) }
                }
            }
        }

        /// One frame: its opcode, whether it ends its message, and its payload.
        private func frame() -> (UInt8, Bool, ArraySlice<UInt8>)? {
            guard need(2) else { return nil }
            let first = buffer[start]
            var length = Int(buffer[start + 1] & 0x7f)
            var header = 2
            if length == 126 {
                guard need(4) else { return nil }
                length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
                header = 4
            } else if length == 127 {
                guard need(10) else { return nil }
                length = (2..<10).reduce(0) { $0 << 8 | Int(buffer[start + $1]) }
                header = 10
            }
            guard need(header + length) else { return nil }
            let payload = buffer[(start + header)..<(start + header + length)]
            start += header + length
            return (first & 0x0f, first & 0x80 != 0, payload)
        }

        /// Whether `count` unread bytes are buffered, reading until they are.
        private func need(_ count: Int) -> Bool {
            while buffer.count - start < count {
                guard fill() else { return false }
            }
            return true
        }

        /// Reads what came; false when the connection ended or it is time to stop.
        private func fill() -> Bool {
            if start > 0, start == buffer.count || start > 1 << 20 {
                buffer.removeSubrange(..<start)
                start = 0
            }
            while shouldGoOn() {
                let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffer += chunk[..<count]
                    return true
                }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return false
            }
            return false
        }
    }
}
