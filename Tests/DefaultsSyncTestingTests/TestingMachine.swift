import Foundation
import TestSupport

/// A running `DefaultsSyncTestingHelper`: one machine syncing through an in-memory server in its
/// own process, with a peer and an attacker on that server (see Tests/SyncTestingHelper/main.swift).
final class TestingMachine: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let helperPath = builtExecutable("DefaultsSyncTestingHelper")
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: helperPath) }

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

    /// What the process logged so far.
    var log: String { child.error }

    /// Sends a command and returns its answer, which must start with `answer`.
    @discardableResult
    func send(_ command: String, answer: String = "ok") async throws -> String {
        let start = child.lines().count
        try child.write(command + "\n")
        let line = try await child.line(after: start) { _ in true }
        guard line.hasPrefix(answer) else {
            throw Failure(description: "\(command): \(line); log: \(log.suffix(2000))")
        }
        return line
    }

    /// The word after `prefix KEY ` in the answer to `command KEY`.
    func value(_ command: String, _ key: String, answer: String) async throws -> String {
        String(try await send("\(command) \(key)", answer: "\(answer) \(key) ").dropFirst("\(answer) \(key) ".count))
    }

    func get(_ key: String) async throws -> String { try await value("get", key, answer: "value") }
    /// What the peer reads of `key` on the server.
    func onServer(_ key: String) async throws -> String { try await value("peer-get", key, answer: "peer") }

    func waitUntil(
        _ what: String, fileID: String = #fileID, line: Int = #line, _ condition: () async throws -> Bool
    ) async throws {
        try await TestSupport.waitUntil("\(what); log: \(log.suffix(2000))", fileID: fileID, line: line, condition)
    }

    /// Waits until syncing is done, and returns the status line.
    func waitForSync() async throws -> String {
        var status = ""
        try await waitUntil("sync to complete: \(status)") {
            status = try await send("wait-at-most 5", answer: "status")
            return status.contains("connected=true pending=0")
        }
        return status
    }

    func quit() async throws {
        try await send("quit")
    }
}
