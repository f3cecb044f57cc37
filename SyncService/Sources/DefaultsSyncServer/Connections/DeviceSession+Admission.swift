import DefaultsSyncProtocol
import HummingbirdWebSocket

extension DeviceSession {
    /// Admits the device to its owner's group (``ChangeFanout/join(_:owner:issuedAt:welcome:)``),
    /// unless it was closed as a slow consumer lately and its wait is not over
    /// (``ReconnectionAdmission``), its user holds as many connections to this instance as they may
    /// (``ServiceLimits/userConnections``), its user's requests wait for their share of the
    /// database (``UserDatabaseShare``), or the user revoked the tokens issued before its own
    /// (``Revocation``): then closes the connection saying which, and returns `false`. An admitted
    /// device's connection counts against its user's until ``leave(_:)``.
    ///
    /// A device refused for coming back before its wait is over is held until it hangs up or the
    /// wait ends (at most ``longestHold``), and only then told its wait: one that ignores the wait
    /// and connects again as soon as it is closed costs the instance a socket, not a connection a
    /// moment. A device that honours the wait is never held, and a user's held connections count
    /// against their connections (``ServiceLimits/userConnections``).
    func join(
        _ outbox: DeviceOutbox, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter
    ) async throws -> Bool {
        let (owner, limits) = (owner, limits)
        if let wait = reconnections.refusal(of: claims) {
            metrics.refusedReconnection()
            // Not at notice: a device that ignores the wait comes back many times a second.
            logger.debug("refused a connection of \(owner) from \(client): closed as a slow consumer lately")
            // Held first: the close frame ends the connection (the server's side of the close), and
            // a device that ignores it would be back at once.
            // Held connections count as the user's, so a client opening many at once is held
            // no more than the user's connections; past that, it is refused at once.
            if fanout.budgets.admit(owner.user) {
                await Self.hold(inbound, for: min(wait, Self.longestHold))
                fanout.budgets.release(owner.user)
            }
            // It may have hung up meanwhile: then there is nobody to tell.
            try? await refuse(
                outbox, outbound, .tryAgainLater,
                SyncCloseReason.tryAgainLater.text(retryAfter: wait, "closed as a slow consumer lately"))
            return false
        }
        guard fanout.budgets.admit(owner.user) else {
            logger.notice("refused a connection of \(owner): the user holds \(limits.userConnections) already")
            try await refuse(
                outbox, outbound, .tooManyConnections,
                SyncCloseReason.tooManyConnections.text("at most \(limits.userConnections) per user on this instance"))
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
        } catch let refusal as UserDatabaseShare.Refusal {
            fanout.budgets.release(owner.user)
            metrics.refusedPastShare()
            try await refuse(
                outbox, outbound, .tryAgainLater,
                SyncCloseReason.tryAgainLater.text(retryAfter: UserDatabaseShare.retryAfter, "\(refusal)"))
            return false
        } catch {
            fanout.budgets.release(owner.user)
            outbox.finish()
            throw error
        }
        guard joined else {
            fanout.budgets.release(owner.user)
            logger.notice("refused a connection of \(owner): its token was issued before the user revoked theirs")
            try await refuse(
                outbox, outbound, .tokenRevoked, SyncCloseReason.tokenRevoked.text("the token was issued before it"))
            return false
        }
        return true
    }

    /// Closes a connection not admitted, for `reason` (`text` in its close frame). Waits a moment
    /// before the close frame: one that arrives with the upgrade's response can be missed by a
    /// client still setting up (as a refused token's, in ``SyncServer``).
    private func refuse(
        _ outbox: DeviceOutbox, _ outbound: WebSocketOutboundWriter, _ reason: SyncCloseReason, _ text: String
    ) async throws {
        outbox.finish()
        try await Task.sleep(for: .milliseconds(100))
        try await outbound.close(reason.closeCode, reason: Self.closeFrameReason(text))
    }

    /// The longest a refused connection is held before the instance closes it: long enough that a
    /// device ignoring its wait connects a few times a minute, short enough to cost little.
    static let longestHold = Duration.seconds(5)

    /// Returns when the device hangs up (its side of the close, or the connection lost) or after
    /// `duration`, whichever comes first; what it sends meanwhile is read and dropped.
    private static func hold(_ inbound: WebSocketInboundStream, for duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await _ in inbound {}
                } catch {}
            }
            group.addTask { try? await Task.sleep(for: duration) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Takes the device out of its owner's group and its connection off its user's count.
    func leave(_ outbox: DeviceOutbox) async {
        await fanout.leave(outbox, owner: owner)
        fanout.budgets.release(owner.user)
    }
}
