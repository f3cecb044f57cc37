import Foundation
import NIOCore

/// Text from outside (a claimed user, a close reason, an error that may quote a key) as a log line
/// shows it: quoted, with newlines and every other control character escaped as Swift's
/// `debugDescription` escapes them, so that it never splits a record or forges one; cut after
/// `limit` characters. The one rule for outside text in the server's logs (``Owner``'s
/// description follows it too).
func escaped(_ text: some StringProtocol, limit: Int = 256) -> String {
    text.count > limit ? (String(text.prefix(limit)) + "…").debugDescription : String(text).debugDescription
}

/// Where a connection comes from, as logs name it: the peer's address and, behind a proxy, the
/// client the proxy says it forwards (`X-Forwarded-For`, unverified, escaped).
struct ClientAddress: CustomStringConvertible, Sendable {
    let peer: String
    let forwardedFor: String?

    init(channel: any Channel, forwardedFor: String?) {
        peer = Self.describe(channel.remoteAddress)
        self.forwardedFor = forwardedFor
    }

    var description: String { forwardedFor.map { "\(peer) (forwarded for \(escaped($0, limit: 128)))" } ?? peer }

    private static func describe(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress else { return "an unknown address" }
        let port = address.port.map { ":\($0)" } ?? ""
        if case .v6 = address { return "[\(ip)]\(port)" }
        return ip + port
    }
}

/// The user and namespace a token claims, read without verifying it: only to say in a refusal's
/// log line whom a refused token claimed to be. Never trusted, always escaped.
struct ClaimedIdentity: CustomStringConvertible, Sendable {
    var user: String?
    var namespace: String?

    init(token: String?) {
        let parts = token?.split(separator: ".", omittingEmptySubsequences: false) ?? []
        guard parts.count == 3, parts[1].utf8.count <= 64 * 1024 else { return }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return }
        user = object["sub"] as? String
        namespace = object["ns"] as? String
    }

    var description: String {
        guard user != nil || namespace != nil else { return "no readable claims" }
        return
            "claimed user \(user.map { escaped($0) } ?? "(none)"), namespace \(namespace.map { escaped($0) } ?? "(none)")"
    }
}
