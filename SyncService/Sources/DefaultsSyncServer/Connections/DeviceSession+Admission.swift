import DefaultsSyncProtocol
import HummingbirdWebSocket

extension DeviceSession {
    /// Admits the device to its owner's group (``ChangeFanout/join(_:owner:issuedAt:welcome:)``),
    /// unless its user holds as many connections to this instance as they may
    /// (``ServiceLimits/userConnections``) or revoked the tokens issued before its own
    /// (``Revocation``): then closes the connection saying which, and returns `false`. An admitted
    /// device's connection counts against its user's until ``leave(_:)``.
    func join(_ outbox: DeviceOutbox, outbound: WebSocketOutboundWriter) async throws -> Bool {
        let (owner, limits) = (owner, limits)
        guard fanout.budgets.admit(owner.user) else {
            logger.notice("refused a connection of \(owner): the user holds \(limits.userConnections) already")
            outbox.finish()
            let reason = SyncCloseReason.tooManyConnections
            try await Self.pauseBeforeRefusing()
            try await outbound.close(
                reason.closeCode, reason: reason.text("at most \(limits.userConnections) per user on this instance"))
            return false
        }
        let joined: Bool
        do {
            // Revocations recorded before this instance heard of them are in the database; those
            // it hears of meanwhile, the fan-out checks as the device joins.
            if try await storage.revocation(of: owner)?.refuses(issuedAt: claims.issuedAt) == true {
                joined = false
            } else {
                joined = try await fanout.join(outbox, owner: owner, issuedAt: claims.issuedAt) { latest in
                    ServerMessage(kind: .welcome, latest: latest, limits: limits)
                }
            }
        } catch {
            fanout.budgets.release(owner.user)
            outbox.finish()
            throw error
        }
        guard joined else {
            fanout.budgets.release(owner.user)
            outbox.finish()
            logger.notice("refused a connection of \(owner): its token was issued before the user revoked theirs")
            let reason = SyncCloseReason.tokenRevoked
            try await Self.pauseBeforeRefusing()
            try await outbound.close(reason.closeCode, reason: reason.text("the token was issued before it"))
            return false
        }
        return true
    }

    /// Waits a moment before a refusal's close frame: one that arrives with the upgrade's response
    /// can be missed by a client still setting up (as a refused token's, in ``SyncServer``).
    private static func pauseBeforeRefusing() async throws {
        try await Task.sleep(for: .milliseconds(100))
    }

    /// Takes the device out of its owner's group and its connection off its user's count.
    func leave(_ outbox: DeviceOutbox) async {
        await fanout.leave(outbox, owner: owner)
        fanout.budgets.release(owner.user)
    }
}
