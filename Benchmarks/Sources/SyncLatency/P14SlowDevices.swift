import Foundation
import Synchronization

/// P14's hostile devices: raw WebSockets on one instance that ask again and again for a 700 KB
/// value and never read a byte. With `reconnecting` (P14R), one that the server closes connects
/// again at once and asks again, for as long as they run, whatever the close said (no close frame
/// is read). Meanwhile the instances' resident memory is sampled.
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
    private let connections = Atomic<Int>(0)
    private let peaks: Mutex<[Int]>
    private let finished = Mutex<Bool>(false)

    /// How many times the server closed one of them.
    var closedByServer: Int { closes.load(ordering: .relaxed) }
    /// How many connections they opened, the first ones included.
    var connectionsOpened: Int { connections.load(ordering: .relaxed) }
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
        peaks = Mutex(servers.map { ProcessFootprint(of: $0, countingDescriptors: false).residentBytes })
        let thread = Thread { [self] in run() }
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        while !finished.withLock({ $0 }) { usleep(10_000) }
    }

    private func run() {
        var sockets: [Int32?] = tokens.map { connect(token: $0) }
        var nextSample = ContinuousClock.now
        while running.load(ordering: .relaxed) {
            if ContinuousClock.now >= nextSample {
                let resident = servers.map { ProcessFootprint(of: $0, countingDescriptors: false).residentBytes }
                peaks.withLock { peaks in peaks = zip(peaks, resident).map { max($0, $1) } }
                nextSample = .now + .milliseconds(100)
            }
            // Woken by any close, so that a reconnecting device connects again at once.
            var descriptors = sockets.map {
                pollfd(fd: $0 ?? -1, events: RawWebSocket.peerClosed, revents: 0)
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            for index in sockets.indices {
                if let socket = sockets[index], RawWebSocket.isClosed(socket) {
                    close(socket)
                    closes.add(1, ordering: .relaxed)
                    sockets[index] = nil
                }
                if sockets[index] == nil, reconnecting { sockets[index] = connect(token: tokens[index]) }
            }
        }
        for socket in sockets.compactMap({ $0 }) { close(socket) }
        finished.withLock { $0 = true }
    }

    /// A new device: the upgrade and its requests, sent; `nil` when the instance does not accept.
    private func connect(token: String) -> Int32? {
        guard let socket = RawWebSocket.connected(to: port, receiveBuffer: 65_536) else { return nil }
        var bytes = RawWebSocket.upgradeRequest(token: token)
        for id in 1...requests {
            bytes += RawWebSocket.maskedTextFrame(#"{"id":\#(id),"kind":"records","keys":["big"]}"#)
        }
        RawWebSocket.send(bytes, to: socket)
        connections.add(1, ordering: .relaxed)
        return socket
    }

    /// Stores the 700 KB value `big` for the user of `token`, through a device that reads its reply.
    static func storeValue(port: Int, token: String, bytes: Int) throws {
        guard let socket = RawWebSocket.connected(to: port) else {
            throw Failure(description: "cannot connect to \(port)")
        }
        defer { close(socket) }
        let value = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 >> 8) }).base64EncodedString()
        let push =
            #"{"id":1,"kind":"push","records":[{"key":"big","value":"\#(value)","wall":1,"counter":0,"origin":"p14"}]}"#
        RawWebSocket.send(RawWebSocket.upgradeRequest(token: token) + RawWebSocket.maskedTextFrame(push), to: socket)
        // The reply comes after the welcome: read until it does.
        let deadline = Date().addingTimeInterval(30)
        let reader = RawWebSocket.Reader(socket: socket) { Date() < deadline }
        guard reader.upgraded() else { throw Failure(description: "P14's push: the upgrade was refused") }
        while let message = reader.next() {
            guard case .text(let head) = message else { break }
            if head.contains(#""kind":"reply""#) { return }
        }
        throw Failure(description: "no reply to P14's push")
    }
}
