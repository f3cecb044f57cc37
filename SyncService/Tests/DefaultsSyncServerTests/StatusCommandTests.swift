import Foundation
import TestSupport
import Testing

/// `defaults-sync status` (the main package's command) given the service's `ws://` URL and a
/// token in `$DEFAULTS_SYNC_TOKEN`: it asks `SyncServiceStore` what the service holds for the
/// token's user and namespace, and fails, naming why, when the token is refused or the server is
/// gone.
@Suite(
    .serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"),
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: StatusCommand.path),
        "needs the main package's defaults-sync: swift build --product defaults-sync in the package's root"),
    .postgresCluster)
struct StatusCommandTests {
    /// What `status --json` prints.
    struct Report: Decodable {
        var ok: Bool
        var store: String?
        var storeKind: String?
        var connected: Bool
        var error: String?
        var errorKind: String?
        var serverRecords: Int?
        var serverLastChange: Date?
    }

    /// Runs `defaults-sync status` with the token in the environment (every variable of the
    /// command set, so that none comes from the test's own environment).
    static func status(url: String, token: String, json: Bool = true, namespace: String = "") throws -> (
        result: ChildProcess.Result, report: Report?
    ) {
        let result = try ChildProcess.run(
            StatusCommand.path, ["status", "--timeout", "60"] + (json ? ["--json"] : []),
            environment: [
                "DEFAULTS_SYNC_URL": url, "DEFAULTS_SYNC_TOKEN": token, "DEFAULTS_SYNC_NAMESPACE": namespace,
                "XDG_CONFIG_HOME": FileManager.default.temporaryDirectory.appendingPathComponent("no-such-dir").path,
            ])
        guard json else { return (result, nil) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (result, try? decoder.decode(Report.self, from: result.outputData))
    }

    @Test func reportsTheRecordsTheServiceHoldsForTheTokensUserAndNamespace() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let token = try await key.token(user: "grace")
        let laptop = try await SyncProcess(
            configDirectory: directory.machine("laptop"), url: server.url, namespace: "-",
            keys: ["one", "two", "three"], token: token)
        for name in ["one", "two", "three"] {
            try await laptop.set(name, "value-of-\(name)")
        }
        try await laptop.waitForSync()
        try await laptop.quit()
        // Another user's records are not the token's.
        let other = try await SyncProcess(
            configDirectory: directory.machine("other"), url: server.url, namespace: "-", keys: ["theirs"],
            token: try await key.token(user: "heidi"))
        try await other.set("theirs", "x")
        try await other.waitForSync()
        try await other.quit()
        let held = try cluster.query(
            "SELECT count(*) FROM defaults_sync_service_values WHERE user_id = 'grace' AND namespace = 'com.example.app'",
            database: "defaults_sync")
        #expect(held == ["3"])

        let (result, report) = try Self.status(url: server.url, token: token, namespace: "com.example.app")
        #expect(result.status == 0, "\(result)")
        #expect(report?.ok == true && report?.connected == true && report?.error == nil, "\(result)")
        #expect(report?.serverRecords == 3, "\(result)")
        #expect(report?.serverLastChange != nil, "\(result)")
        #expect(report?.storeKind == "sync-service")
        #expect(report?.store == "\(server.url) (user grace, namespace com.example.app)", "\(result)")
        #expect(!result.output.contains(token) && !result.error.contains(token))

        let text = try Self.status(url: server.url, token: token, json: false).result
        #expect(text.status == 0, "\(text)")
        #expect(text.output.contains("connected: yes"), "\(text)")
        #expect(text.output.contains("server records: 3 (last change "), "\(text)")
    }

    @Test func aRevokedOrForeignTokenAndAStoppedServerFail() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let old = try await key.tokens.sign(
            user: "ivan", namespace: "com.example.app", lifetime: .seconds(3600), now: Date().addingTimeInterval(-10))
        #expect(try Self.status(url: server.url, token: old).result.status == 0)
        let revoked = try ChildProcess.run(
            SyncServerProcess.executable, ["revoke", "--user", "ivan"],
            environment: ["DEFAULTS_SYNC_DATABASE_URL": cluster.url])
        #expect(revoked.status == 0, "\(revoked)")

        let (result, report) = try Self.status(url: server.url, token: old)
        #expect(result.status != 0, "\(result)")
        #expect(report?.ok == false && report?.connected == false, "\(result)")
        #expect(report?.errorKind == "refused-token", "\(result)")
        #expect(report?.error?.contains("refused the token") == true, "\(result)")
        #expect(report?.error?.contains("revoked") == true, "\(result)")
        let text = try Self.status(url: server.url, token: old, json: false).result
        #expect(text.status != 0, "\(text)")
        #expect(text.output.contains("error: ") && text.output.contains("refused the token"), "\(text)")

        // A token another key signed.
        let elsewhere = try TemporaryDirectory()
        let foreignKey = try await TokenKey(in: elsewhere)
        let foreign = try await foreignKey.token(user: "ivan")
        let (foreignResult, foreignReport) = try Self.status(url: server.url, token: foreign)
        #expect(foreignResult.status != 0, "\(foreignResult)")
        #expect(foreignReport?.errorKind == "refused-token", "\(foreignResult)")

        // The server gone: unreachable, not a hang.
        let fresh = try await key.token(user: "judy")
        server.kill()
        _ = try? await server.child.wait(timeout: .seconds(60))
        let (goneResult, gone) = try Self.status(url: server.url, token: fresh)
        #expect(goneResult.status != 0, "\(goneResult)")
        #expect(gone?.connected == false, "\(goneResult)")
        #expect(gone?.errorKind == "unreachable", "\(goneResult)")
        #expect(gone?.error?.contains(server.url) == true, "\(goneResult)")
    }
}

enum StatusCommand {
    /// The main package's `defaults-sync`, built for the same platform and configuration as this
    /// package's products (this package builds only the libraries it links).
    static let path: String = {
        let mainPackage = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return mainPackage.appendingPathComponent(".build")
            .appendingPathComponent(builtProductsDirectory.deletingLastPathComponent().lastPathComponent)
            .appendingPathComponent(builtProductsDirectory.lastPathComponent)
            .appendingPathComponent("defaults-sync").path
    }()
}
