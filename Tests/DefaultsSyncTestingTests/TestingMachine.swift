import Foundation
import TestSupport

/// A running `DefaultsSyncTestingHelper`: one machine syncing through an in-memory server in its
/// own process, with a peer and an attacker on that server (see Tests/SyncTestingHelper/main.swift).
final class TestingMachine: HelperProcess {
    let child: ChildProcess
    let directory: URL

    init(passphrase: String? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sync-testing-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        child = try ChildProcess(
            Self.helperPath, passphrase.map { ["--passphrase", $0] } ?? [],
            environment: ["XDG_CONFIG_HOME": directory.path], input: .pipe)
        _ = try await child.line { $0 == "ready" }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    func get(_ key: String) async throws -> String { try await value("get", key, answer: "value") }
    /// What the peer reads of `key` on the server.
    func onServer(_ key: String) async throws -> String { try await value("peer-get", key, answer: "peer") }
}
