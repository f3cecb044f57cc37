import Foundation
import TestSupport

/// A running `DefaultsSyncTestHelper` (`DefaultsSyncServiceTestHelper` in the sync service's
/// tests): one machine with its own config directory, driven by commands on its stdin (see
/// Tests/SyncHelper/main.swift).
final class SyncProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let child: ChildProcess

    #if SYNC_SERVICE_PACKAGE
    // Tests/SyncHelper as the sync service's package builds it, beside the main package's in CI's
    // build folder (SyncService/Package.swift).
    static let helperPath = builtExecutable("DefaultsSyncServiceTestHelper")
    #else
    static let helperPath = builtExecutable("DefaultsSyncTestHelper")
    #endif

    /// Starts a machine syncing through `url` (none when `nil`; `ws://…` for the sync service, with
    /// `token`, or with a token provider reading `tokenFile` each time it is asked, or printed by
    /// `tokenCommand`, run by /bin/sh each time) and waits until
    /// it is ready.
    init(
        configDirectory: URL,
        url: String?,
        namespace: String,
        keys: [String] = [],
        clockOffset: Double = 0,
        debug: Bool = false,
        passphrase: String? = nil,
        token: String? = nil,
        tokenFile: String? = nil,
        tokenCommand: String? = nil
    ) async throws {
        var arguments = [
            "--namespace", namespace, "--clock-offset", "\(clockOffset)", "--fast-reconnect",
            "--keys", keys.joined(separator: ","),
        ]
        let optional: [(String, String?)] = [
            ("--passphrase", passphrase), ("--token", token), ("--token-file", tokenFile),
            ("--token-command", tokenCommand),
        ]
        for case let (option, value?) in optional { arguments += [option, value] }
        child = try ChildProcess(
            Self.helperPath, arguments,
            environment: ["XDG_CONFIG_HOME": configDirectory.path, "DEFAULTS_SYNC_URL": url ?? ""].merging(
                debug ? ["DEFAULTS_SYNC_DEBUG": "1"] : [:], uniquingKeysWith: { $1 }),
            input: .pipe)
        _ = try await child.line { $0 == "ready" }
    }

    /// What the process wrote to stderr (its log) so far.
    var log: String { child.error }

    /// Every complete line the process printed so far.
    var output: [String] { child.lines() }

    /// Sends a command and returns its answer: the next line that is not an observer's report.
    ///
    /// - Throws: When the answer is an `error` line or does not start with `answer`.
    @discardableResult
    func send(_ command: String, answer: String = "", timeout: Duration = defaultWaitTimeout) async throws -> String {
        let start = child.lines().count
        try child.write(command + "\n")
        let line = try await child.line(after: start, timeout: timeout) {
            !$0.hasPrefix("updated ") && !$0.hasPrefix("observed ")
        }
        guard line.hasPrefix(answer) else {
            throw Failure(description: "\(command): \(line)")
        }
        return line
    }

    func set(_ key: String, _ value: String) async throws { try await send("set \(key) \(value)", answer: "ok") }
    func get(_ key: String) async throws -> String {
        String(try await send("get \(key)", answer: "value \(key) ").dropFirst("value \(key) ".count))
    }
    func waitForSync() async throws { try await send("wait", answer: "ok") }
    func flush() async throws { try await send("flush", answer: "ok") }

    /// Waits until `key` reads `value` in this process.
    func waitUntil(_ key: String, is value: String, fileID: String = #fileID, line: Int = #line) async throws {
        var last = ""
        try await TestSupport.waitUntil(
            "\(key) to be \(value), not \(last); log: \(log.suffix(2000))", fileID: fileID, line: line
        ) {
            last = try await get(key)
            return last == value
        }
    }

    /// Ends the process at once (SIGKILL): nothing runs on its way out.
    func kill() {
        child.kill()
    }

    /// Flushes and ends the process.
    func quit() async throws {
        try await send("quit", answer: "ok")
        try await child.wait()
    }
}
