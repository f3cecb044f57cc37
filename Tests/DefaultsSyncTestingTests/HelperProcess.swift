import Foundation
import TestSupport

/// A run of `DefaultsSyncTestingHelper` (Tests/SyncTestingHelper/main.swift), spoken to a command
/// a line and answered a line; each kind of machine the tests drive adds its own commands.
protocol HelperProcess: Sendable {
    var child: ChildProcess { get }
}

/// An answer the test did not expect.
struct HelperFailure: Error, CustomStringConvertible {
    let description: String
}

extension HelperProcess {
    static var helperPath: String { builtExecutable("DefaultsSyncTestingHelper") }
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: helperPath) }

    /// What the process logged so far.
    var log: String { child.error }

    /// Sends a command and returns its answer, which must start with `answer`.
    @discardableResult
    func send(_ command: String, answer: String = "ok") async throws -> String {
        let start = child.lines().count
        try child.write(command + "\n")
        let line = try await child.line(after: start) { _ in true }
        guard line.hasPrefix(answer) else {
            throw HelperFailure(description: "\(command): \(line); log: \(log.suffix(2000))")
        }
        return line
    }

    /// The rest of the answer to `command KEY`, after `answer KEY `.
    func value(_ command: String, _ key: String, answer: String) async throws -> String {
        String(try await send("\(command) \(key)", answer: "\(answer) \(key) ").dropFirst("\(answer) \(key) ".count))
    }

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
