import Foundation

/// The one check every request to the editor passes before anything reads or writes: a page on
/// loopback is reachable from every other page the person has open, and from every local user.
///
/// - The path must begin with the secret (32 random bytes), as Jupyter's token: a page elsewhere
///   cannot guess it, and another local user cannot read it (the browser is opened on a file only
///   its owner can read).
/// - The `Host` header must name the loopback address and the port: a name another site resolves
///   to 127.0.0.1 (DNS rebinding) is refused.
/// - Writes are `POST` only, with the page's own `Origin` and a JSON body of at most
///   ``bodyLimit`` bytes: a form on another site can send neither.
/// - A browser's `Sec-Fetch-Site` must say the page's own requests come from the page itself.
package struct RequestGate: Sendable {
    /// The secret of the editor's address.
    package let secret: String
    /// The port the server listens on.
    package let port: Int

    /// The largest body read: a value a person edits in a page is far smaller.
    package static let bodyLimit = 1 << 20

    package init(secret: String, port: Int) {
        self.secret = secret
        self.port = port
    }

    /// A new secret: 32 bytes from the system's generator, in base64url.
    package static func makeSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// What the page is: the address a person opens.
    package var address: String { "http://127.0.0.1:\(port)/\(secret)/" }

    /// The routes the page uses, with the method each takes.
    package enum Route: String, Sendable, CaseIterable {
        case page = ""
        case script = "app.js"
        case style = "app.css"
        case domain = "api/domain"
        case explain = "api/explain"
        case events = "api/events"
        case write = "api/write"
        case reset = "api/reset"

        /// Whether the route changes anything: it then takes `POST` only, from the page's origin.
        /// Every route says (no default), so that a new one cannot be a write served to `GET`.
        package var isWrite: Bool {
            switch self {
            case .write, .reset: true
            case .page, .script, .style, .domain, .explain, .events: false
            }
        }

        /// The page's own files: constant bytes, which read nothing.
        package var isPageFile: Bool {
            switch self {
            case .page, .script, .style: true
            case .domain, .explain, .events, .write, .reset: false
            }
        }
    }

    package enum Verdict: Equatable, Sendable {
        /// Go on with `route`; `query` is the part of the address after `?`.
        case allowed(Route, query: String)
        /// The address without its final `/`: sent to the one with it, so that the page's relative
        /// addresses resolve under the secret.
        case redirect(to: String)
        case refused(status: Int, reason: String)
    }

    /// Judges a request by its method, target and headers (names in any case).
    package func judge(method: String, target: String, headers: [(name: String, value: String)]) -> Verdict {
        func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name }.map(\.value)
        }
        let hosts = values("host")
        guard hosts.count == 1, isLoopback(hosts[0]) else {
            return .refused(status: 421, reason: "This page answers only to 127.0.0.1:\(port) and localhost:\(port)")
        }
        let (path, query) = split(target)
        let prefix = "/" + secret
        guard path.utf8.count >= prefix.utf8.count, constantTimeEqual(path.utf8.prefix(prefix.utf8.count), prefix.utf8)
        else {
            return .refused(status: 404, reason: "Not found")
        }
        let rest = path.utf8.dropFirst(prefix.utf8.count)
        if rest.isEmpty {
            return .redirect(to: prefix + "/")
        }
        guard rest.first == UInt8(ascii: "/"),
            let route = Route(rawValue: String(decoding: rest.dropFirst(), as: UTF8.self))
        else {
            return .refused(status: 404, reason: "Not found")
        }
        let site = values("sec-fetch-site").first?.lowercased()
        if route.isWrite {
            guard method == "POST" else {
                return .refused(status: 405, reason: "Changes are made by POST only")
            }
            let origins = values("origin")
            guard origins.count == 1, isOwnOrigin(origins[0]) else {
                return .refused(status: 403, reason: "Changes are accepted only from the editor's own page")
            }
            guard site == nil || site == "same-origin" else {
                return .refused(status: 403, reason: "Changes are accepted only from the editor's own page")
            }
            let type = values("content-type").first?.lowercased() ?? ""
            guard type == "application/json" || type.hasPrefix("application/json;") else {
                return .refused(status: 415, reason: "A change is sent as application/json")
            }
            if let length = values("content-length").first.flatMap({ Int($0) }), length > Self.bodyLimit {
                return Self.tooLarge
            }
        } else {
            // HEAD of the event stream would take a listener's place for a stream never sent.
            guard method == "GET" || (method == "HEAD" && route != .events) else {
                return .refused(status: 405, reason: "Only GET reads the editor")
            }
            // The page itself may be opened from anywhere (a link, the file that opens it); what
            // it fetches comes from the page.
            if route != .page, let site, site != "same-origin" {
                return .refused(status: 403, reason: "The editor's data is served to its own page only")
            }
        }
        return .allowed(route, query: query)
    }

    /// The refusal of a body over ``bodyLimit``, whether its length is said first or not.
    package static let tooLarge = Verdict.refused(status: 413, reason: "A change is at most \(bodyLimit) bytes")

    /// The names the page is reached by: the loopback address the server listens on, and
    /// `localhost`. Any other name may be someone else's that resolves here.
    private static let loopbackNames = ["127.0.0.1", "localhost"]

    private func isLoopback(_ host: String) -> Bool {
        Self.loopbackNames.contains { host.lowercased() == "\($0):\(port)" }
    }

    private func isOwnOrigin(_ origin: String) -> Bool {
        Self.loopbackNames.contains { origin.lowercased() == "http://\($0):\(port)" }
    }

    private func split(_ target: String) -> (path: String, query: String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    /// Compares every byte whatever differs first, so that the time taken does not tell an
    /// attacker how much of a guessed secret was right.
    private func constantTimeEqual(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) {
            difference |= left ^ right
        }
        return difference == 0
    }
}
