import DefaultsSyncSQL
import Foundation
import Logging
import PostgresNIO

/// A user's tokens issued before a time are revoked: stored in
/// `defaults_sync_service_revocations`, and told to every instance on ``ServiceSchema/channel``
/// (sealed, as every notification is: ``AnnouncementSeal``), each of which closes that user's
/// connections whose token is older.
public struct Revocation: Sendable, Hashable {
    /// The user whose tokens are revoked.
    public var user: String
    /// Tokens issued (`iat`) before this time, in seconds since 1970, are refused.
    public var before: Int64

    public init(user: String, before: Int64) {
        self.user = user
        self.before = before
    }

    /// What a notification's sealed text says: `revoke <before> <user>` (the user last, as it may
    /// hold spaces; an announcement's text starts with its hexadecimal owner tag instead).
    var text: String { "revoke \(before) \(user)" }

    init?(text: String) {
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "revoke", let before = Int64(parts[1]) else { return nil }
        (user, self.before) = (String(parts[2]), before)
    }

    /// Whether it refuses a token issued at `issuedAt` (seconds since 1970); a token that does
    /// not say when it was issued is older than any revocation.
    func refuses(issuedAt: Int64?) -> Bool {
        guard let issuedAt else { return true }
        return issuedAt < before
    }

    /// Records the revocation in the database at `databaseURL` and tells every instance, in one
    /// transaction; returns the one in force, which is never earlier than one recorded before
    /// (revoking cannot un-revoke).
    public static func record(
        _ revocation: Revocation, databaseURL: String, logger: Logger
    ) async throws -> Revocation {
        let connection = try await ServiceSchema.connectMigrated(to: databaseURL, logger: logger)
        do {
            let seal = try await AnnouncementSeal.read(on: connection, logger: logger)
            let recorded = try await connection.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "SELECT set_config('defaults_sync.user', \(revocation.user), true)", logger: logger)
                let rows = try await connection.query(
                    """
                    INSERT INTO defaults_sync_service_revocations AS stored (user_id, revoked_before)
                    VALUES (\(revocation.user), to_timestamp(\(revocation.before)))
                    ON CONFLICT (user_id) DO UPDATE
                        SET revoked_before = greatest(stored.revoked_before, EXCLUDED.revoked_before)
                    RETURNING floor(extract(epoch FROM revoked_before))::bigint
                    """, logger: logger)
                var recorded = revocation
                for try await before in rows.decode(Int64.self) {
                    recorded.before = before
                }
                // Delivered at commit, to every instance listening.
                let payload = try seal.seal(recorded.text)
                try await connection.query("SELECT pg_notify(\(ServiceSchema.channel), \(payload))", logger: logger)
                return recorded
            }
            try await connection.close()
            return recorded
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
