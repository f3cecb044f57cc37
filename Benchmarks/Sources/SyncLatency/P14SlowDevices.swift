import Foundation
import Synchronization

/// P14's hostile devices: raw WebSockets on one instance that ask again and again for a 700 KB
/// value and never read a byte. With `reconnecting`, one that the server closes (a slow
/// consumer) connects again and asks again, for as long as they run. Meanwhile the instances'
/// resident memory is sampled.
final class SlowDevices: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let port: Int
    private let tokens: [String]
    private let requests: Int
    private let servers: [pid_t]
    private let reconnecting: Bool
    private let running = Atomic<Bool>(true)
    private let closes = Atomic<Int>(0)
    private let peaks: Mutex<[Int]>
    private let finished = Mutex<Bool>(false)

    /// How many times the server closed one of them.
    var closedByServer: Int { closes.load(ordering: .relaxed) }
    /// The largest resident memory of each server seen while they ran.
    var peakResidentBytes: [Int] { peaks.withLock { $0 } }

    /// Connects one device per token to `port` (sending `requests` requests each) and keeps them
    /// connected from a thread of their own, sampling the memory of `servers` every 100 ms, until
    /// ``stop()``.
    init(port: Int, tokens: [String], requests: Int, reconnecting: Bool, servers: [pid_t]) {
        self.reconnecting = reconnecting
        self.port = port
        self.tokens = tokens
        self.requests = requests
        self.servers = servers
        peaks = Mutex(servers.map(Self.residentBytes(of:)))
        let thread = Thread { [self] in run() }
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        while !finished.withLock({ $0 }) { usleep(10_000) }
    }

    private func run() {
        var sockets: [Int32?] = tokens.map { connect(token: $0) }
        while running.load(ordering: .relaxed) {
            for index in sockets.indices {
                if let socket = sockets[index], Self.isClosed(socket) {
                    close(socket)
                    closes.add(1, ordering: .relaxed)
                    sockets[index] = nil
                }
                if sockets[index] == nil, reconnecting { sockets[index] = connect(token: tokens[index]) }
            }
            let resident = servers.map(Self.residentBytes(of:))
            peaks.withLock { peaks in peaks = zip(peaks, resident).map { max($0, $1) } }
            usleep(100_000)
        }
        for socket in sockets.compactMap({ $0 }) { close(socket) }
        finished.withLock { $0 = true }
    }

    /// A new device: the upgrade and its requests, sent; `nil` when the instance does not accept.
    private func connect(token: String) -> Int32? {
        guard let socket = Self.connected(to: port, receiveBuffer: 65_536) else { return nil }
        var bytes = Self.upgradeRequest(token: token)
        for id in 1...requests {
            bytes += Self.maskedTextFrame(#"{"id":\#(id),"kind":"records","keys":["big"]}"#)
        }
        Self.send(bytes, to: socket)
        return socket
    }

    /// Stores the 700 KB value `big` for the user of `token`, through a device that reads its reply.
    static func storeValue(port: Int, token: String, bytes: Int) throws {
        guard let socket = connected(to: port) else { throw Failure(description: "cannot connect to \(port)") }
        defer { close(socket) }
        let value = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 >> 8) }).base64EncodedString()
        let push =
            #"{"id":1,"kind":"push","records":[{"key":"big","value":"\#(value)","wall":1,"counter":0,"origin":"p14"}]}"#
        send(upgradeRequest(token: token) + maskedTextFrame(push), to: socket)
        // The reply comes after the welcome: read until it does.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !String(decoding: received, as: UTF8.self).contains(#""kind":"reply""#) {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else {
                throw Failure(description: "no reply to P14's push: \(String(decoding: received, as: UTF8.self))")
            }
            received += buffer[..<count]
        }
    }

    /// A TCP connection to the loopback `port`; with `receiveBuffer`, a receive buffer that small,
    /// so that the kernel takes little of what the server sends before the server's own buffers
    /// fill (with the default, loopback's autotuning lets the kernel hold tens of megabytes).
    private static func connected(to port: Int, receiveBuffer: Int32? = nil) -> Int32? {
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

    private static func send(_ bytes: [UInt8], to socket: Int32) {
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

    /// Whether the peer closed or reset the connection, whatever it sent that was not read.
    private static func isClosed(_ socket: Int32) -> Bool {
        // POLLRDHUP (0x2000): the peer closed its side, even with unread data before the end.
        var descriptor = pollfd(fd: socket, events: Int16(0x2000), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return descriptor.revents & Int16(0x2000 | Int(POLLHUP) | Int(POLLERR)) != 0
    }

    static func residentBytes(of process: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    private static func upgradeRequest(token: String) -> [UInt8] {
        Array(
            ("GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n").utf8)
    }

    /// One final text frame of `text`, masked as a client's must be.
    private static func maskedTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
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
}
