import Foundation
import TestSupport
import Testing

/// With a passphrase, neither key names nor values reach the service or its database in clear.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct EncryptionTests {
    @Test func theDatabaseHoldsNothingInClearAndAWrongPassphraseOverwritesNothing() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "frank")
        let laptop = try await SyncProcess(
            configDirectory: directory.machine("laptop"), url: server.url, namespace: "-",
            passphrase: "correct horse battery staple", token: token)
        let phone = try await SyncProcess(
            configDirectory: directory.machine("phone"), url: server.url, namespace: "-", keys: ["diary-entry"],
            passphrase: "correct horse battery staple", token: token)
        try await laptop.set("diary-entry", "meet-at-the-old-mill")
        try await phone.waitUntil("diary-entry", is: "meet-at-the-old-mill")

        let dump = try cluster.query(
            "SELECT key || ' ' || encode(coalesce(value, ''), 'escape') FROM defaults_sync_service_values",
            database: "defaults_sync"
        ).joined(separator: "\n")
        #expect(!dump.isEmpty)
        #expect(!dump.contains("diary"))
        #expect(!dump.contains("old-mill"))

        let intruder = try await SyncProcess(
            configDirectory: directory.machine("intruder"), url: server.url, namespace: "-", keys: ["diary-entry"],
            passphrase: "wrong", token: token)
        try await intruder.set("diary-entry", "overwritten")
        let status = try await intruder.send("wait-at-most 5", answer: "status")
        #expect(status.contains("passphrase"), "\(status)")
        try await laptop.set("after", "still-syncing")
        try await phone.send("get after", answer: "value")
        try await laptop.waitForSync()
        #expect(try await phone.get("diary-entry") == "meet-at-the-old-mill")
        #expect(try await laptop.get("diary-entry") == "meet-at-the-old-mill")
        _ = server
    }
}
