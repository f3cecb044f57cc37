import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import TestSupport
import Testing

/// `defaults-sync-server revoke --user U` closes the user's live connections on every instance
/// and refuses their older tokens from then on, while a token issued after it is accepted.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct RevocationTests {
    @Test(.timeLimit(.minutes(2)))
    func revokingClosesTheUsersConnectionsOnEveryInstanceAndRefusesTheirOlderTokens() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let first = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let second = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let issued = Date().addingTimeInterval(-10)
        let old = try await key.tokens.sign(
            user: "revoked", namespace: "com.example.app", lifetime: .seconds(3600), now: issued)
        let bystander = try await key.token(user: "bystander")
        let welcomed = Tally()
        func device(on server: SyncServerProcess, token: String) -> Task<RawDevice.Closed, any Error> {
            let url = server.url
            return Task {
                try await RawDevice.connect(url, token: token) { inbound, _ in
                    var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    var messages: [ServerMessage] = []
                    while let message = try await RawDevice.next(&iterator) {
                        if message.kind == .welcome { welcomed.increment() }
                        messages.append(message)
                    }
                    return messages
                }
            }
        }
        let devices = [device(on: first, token: old), device(on: second, token: old)]
        let other = device(on: first, token: bystander)
        try await waitUntil("three welcomes") { welcomed.value == 3 }

        // The URL from the environment, never from the command line.
        let revoked = try ChildProcess.run(
            SyncServerProcess.executable, ["revoke", "--user", "revoked"],
            environment: ["DEFAULTS_SYNC_DATABASE_URL": cluster.url])
        #expect(revoked.status == 0, "\(revoked)")
        #expect(revoked.output.hasPrefix("revoked the tokens of \"revoked\" issued before"), "\(revoked.output)")
        for device in devices {
            let closed = try await device.value
            #expect(SyncCloseReason(closeReason: closed.reason) == .tokenRevoked, "\(closed.reason ?? "")")
            #expect(closed.code == .policyViolation)
        }
        // Another user's connection stays open.
        #expect(try await first.connections() >= 1)

        // The old token is refused from now on, on both instances; one issued after is accepted.
        for server in [first, second] {
            let refused = try await RawDevice.refusal(server.url, token: old)
            #expect(SyncCloseReason(closeReason: refused.reason) == .tokenRevoked, "\(refused.reason ?? "")")
            #expect(refused.messages.isEmpty)
        }
        let fresh = try await key.tokens.sign(
            user: "revoked", namespace: "com.example.app", lifetime: .seconds(3600), now: Date().addingTimeInterval(2))
        let accepted = try await RawDevice.exchange(second.url, token: fresh, [])
        #expect(accepted.map(\.kind) == [.welcome])

        // Revoking with an earlier time does not un-revoke.
        let earlier = try ChildProcess.run(
            SyncServerProcess.executable, ["revoke", "--user", "revoked", "--before", "2001-01-01T00:00:00Z"],
            environment: ["DEFAULTS_SYNC_DATABASE_URL": cluster.url])
        #expect(earlier.status == 0, "\(earlier)")
        let stillRefused = try await RawDevice.refusal(first.url, token: old)
        #expect(SyncCloseReason(closeReason: stillRefused.reason) == .tokenRevoked)
        other.cancel()
    }
}
