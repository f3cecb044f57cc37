import Crypto
import Foundation
import Logging
import PostgresNIO

/// Seals what crosses ``ServiceSchema/channel``, so that the notifications carry nothing in clear
/// and only the service's instances can make one that is acted on.
///
/// Any role that can connect to the database can `LISTEN` and `NOTIFY` on any channel: row-level
/// security does not reach notifications. So each one is ChaCha20-Poly1305 sealed with a key derived
/// from the secret the schema drew from PostgreSQL's strong random source, in a table only the
/// service's role may read (``ServiceSchema``); a notification that does not open is ignored.
struct AnnouncementSeal: Sendable {
    /// The largest text a sealed notification carries: its base64 (with the nonce and the tag)
    /// stays under PostgreSQL's limit of 8,000 bytes.
    static let textLimit = 5_880
    /// What precedes the base64 of a sealed notification, naming the format.
    private static let prefix = "s1 "

    private let key: SymmetricKey

    init(secret: Data) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret),
            info: Data("defaults-sync-service notifications v1".utf8), outputByteCount: 32)
    }

    /// Reads the secret with `connection`.
    static func read(on connection: PostgresConnection, logger: Logger) async throws -> AnnouncementSeal {
        let rows = try await connection.query(
            "SELECT secret FROM defaults_sync_service_secret WHERE id = 1", logger: logger)
        for try await secret in rows.decode(Data.self) where secret.count >= 32 {
            return AnnouncementSeal(secret: secret)
        }
        throw ServiceStorageError("the notifications' secret (defaults_sync_service_secret) is missing or short")
    }

    /// The notification's payload for `text` (at most ``textLimit`` bytes).
    func seal(_ text: String) throws -> String {
        Self.prefix + (try ChaChaPoly.seal(Data(text.utf8), using: key).combined.base64EncodedString())
    }

    /// The text `payload` seals, or `nil` when it was not sealed with this key.
    func open(_ payload: String) -> String? {
        guard payload.hasPrefix(Self.prefix), payload.utf8.count < 8_000,
            let combined = Data(base64Encoded: String(payload.dropFirst(Self.prefix.count))),
            let box = try? ChaChaPoly.SealedBox(combined: combined),
            let opened = try? ChaChaPoly.open(box, using: key)
        else { return nil }
        return String(bytes: opened, encoding: .utf8)
    }
}
