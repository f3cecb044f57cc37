import DefaultsSchema
import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `defaults edit DOMAIN --no-open` running on a sandbox, and raw HTTP requests to it: raw, so
/// that a test can send what an attacker's page or program would (another `Host`, no secret,
/// another `Origin`).
final class EditorSession {
    let sandbox: CommandSandbox
    let domain: String
    let server: ChildProcess
    /// The address `defaults edit` printed: `http://127.0.0.1:PORT/SECRET/`.
    let address: String
    let port: Int
    let secret: String

    init(
        _ sandbox: CommandSandbox, domain: String, schema: [KeySchema]? = nil,
        environment: [String: String] = [:], choosing selection: [String]? = nil
    ) throws {
        self.sandbox = sandbox
        self.domain = domain
        if let schema {
            let url = sandbox.dataHome.appendingPathComponent("defaults/schemas/\(domain).json")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONEncoder().encode(DomainSchema(domain: domain, keys: schema)).write(to: url)
        }
        // The domain as named, or chosen by options (`-g`, `--path FILE`).
        server = try sandbox.start(["edit", "--no-open"] + (selection ?? [domain]), environment: environment)
        let line = try server.line { $0.hasPrefix("Editing ") }
        address = String(line.split(separator: " ").last ?? "")
        let parts = address.dropFirst("http://127.0.0.1:".count).split(separator: "/")
        port = Int(parts[0]) ?? 0
        secret = String(parts[1])
    }

    deinit {
        server.signal(SIGTERM)
        _ = try? server.finish()
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        func json() throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
        }
    }

    var origin: String { "http://127.0.0.1:\(port)" }

    /// Sends one request and reads the whole response (the connection is closed after it).
    func request(
        _ method: String, _ path: String, host: String? = nil, headers: [(String, String)] = [],
        body: Data? = nil
    ) throws -> Response {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        if let body {
            text += "Content-Length: \(body.count)\r\n"
        }
        text += "\r\n"
        let raw = try Self.exchange(port: port, Data(text.utf8) + (body ?? Data()))
        return try Self.parse(raw)
    }

    /// `path` under the secret.
    func api(_ path: String) -> String { "/\(secret)/\(path)" }

    /// A write as the page sends it.
    func post(_ path: String, _ json: [String: Any], origin: String? = nil) throws -> Response {
        try request(
            "POST", api(path),
            headers: [("Origin", origin ?? self.origin), ("Content-Type", "application/json")],
            body: try JSONSerialization.data(withJSONObject: json))
    }

    /// The page's entry of `key` (`GET api/domain`).
    func entry(_ key: String) throws -> [String: Any]? {
        let keys = try request("GET", api("api/domain")).json()["keys"] as? [[String: Any]] ?? []
        return keys.first { $0["name"] as? String == key }
    }

    /// Sends `bytes` and reads until the server closes the connection: `true` when it did (and
    /// sent nothing), `false` when it sent something or still had not closed it after a minute.
    static func isClosedByServer(port: Int, after bytes: Data) throws -> Bool {
        let socket = try connected(port: port, receiveTimeout: 60)
        defer { close(socket) }
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, 0) == 0
    }

    /// A socket connected to the server on `port`, whose reads give up after `receiveTimeout` seconds.
    static func connected(port: Int, receiveTimeout: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return socket
    }

    static func exchange(port: Int, _ request: Data) throws -> Data {
        let socket = try connected(port: port, receiveTimeout: 120)
        defer { close(socket) }
        request.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = send(socket, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                // The server may answer and close before reading a body it refuses.
                guard count > 0 else { return }
                sent += count
            }
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    static func parse(_ raw: Data) throws -> Response {
        guard let end = raw.range(of: Data("\r\n\r\n".utf8)) else {
            throw POSIXError(.EBADMSG)
        }
        let head = String(decoding: raw[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Data(raw[end.upperBound...]))
    }
}

/// The editor's event stream (`api/events`) as a page reads it, on a thread of its own.
final class EditorEventStream: Sendable {
    private let socket: Int32
    private let received = Received()

    /// What the stream sent so far, shared with its reading thread (which holds no reference to
    /// the stream, so that the stream's end closes the socket).
    private final class Received: Sendable {
        let data = Mutex(Data())
    }

    init(_ session: EditorSession) throws {
        // Reads never give up: the stream is read until the test ends.
        socket = try EditorSession.connected(port: session.port, receiveTimeout: 0)
        let request = "GET /\(session.secret)/api/events HTTP/1.1\r\nHost: 127.0.0.1:\(session.port)\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        let thread = Thread { [socket, received] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = recv(socket, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                received.data.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
        }
        thread.start()
    }

    deinit {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    var text: String { received.data.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits until the stream holds text that `condition` accepts.
    func wait(for what: String, _ condition: @escaping (String) -> Bool) throws {
        try waitUntil(what) { condition(text) }
    }
}
