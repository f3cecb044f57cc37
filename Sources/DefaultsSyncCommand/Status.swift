import ArgumentParser
import Defaults
import DefaultsPostgres
import Foundation
import Synchronization

/// `defaults-sync status`: whether the store is reachable, what is pending, when each suite last
/// synced.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show whether the sync store is reachable, the pending changes and the last sync time.",
        discussion: """
            The store is the PostgreSQL URL in $\(DefaultsSyncTool.urlVariable) \
            (postgres://user:password@host:5432/database); $\(DefaultsSyncTool.namespaceVariable) \
            names the application's namespace, for the server's record count. Pending changes and \
            sync times are read from the sync journals in $XDG_CONFIG_HOME/.defaults-sync (or \
            ~/.config/.defaults-sync).
            """
    )

    @Flag(help: "Print JSON.")
    var json = false

    struct Report: Encodable {
        struct Suite: Encodable {
            var suite: String
            var pendingChanges: Int
            var lastSync: Date?
            /// Why the suite's journal could not be read.
            var problem: String?
        }

        var store: String?
        var connected: Bool
        var error: String?
        var serverRecords: Int?
        var serverLastChange: Date?
        var suites: [Suite]
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        var report = Report(
            connected: false,
            suites: Defaults.iCloud.journalSummaries().map {
                Report.Suite(
                    suite: $0.suite, pendingChanges: $0.pendingChanges, lastSync: $0.lastSync, problem: $0.problem)
            })
        if let url = environment[DefaultsSyncTool.urlVariable], !url.isEmpty {
            let namespace = environment[DefaultsSyncTool.namespaceVariable].flatMap { $0.isEmpty ? nil : $0 }
            do {
                // Without a namespace only the server is checked: any name will do to connect.
                let store = try PostgresSyncStore(url: url, namespace: namespace ?? "defaults-sync-status")
                report.store = namespace == nil ? store.endpoint : store.description
                let summary = try Self.wait { try await store.serverSummary() }
                report.connected = true
                if namespace != nil {
                    report.serverRecords = summary.records
                    report.serverLastChange = summary.lastChange
                }
            } catch {
                report.error = "\(error)"
            }
        } else {
            report.error = "no store configured: set \(DefaultsSyncTool.urlVariable)"
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(Self.text(report))
        }
    }

    static func text(_ report: Report) -> String {
        let dates = ISO8601DateFormatter()
        var lines = ["store: \(report.store ?? "none")"]
        lines.append("connected: \(report.connected ? "yes" : "no")")
        if let error = report.error {
            lines.append("error: \(error)")
        }
        if let records = report.serverRecords {
            lines.append(
                "server records: \(records)"
                    + (report.serverLastChange.map { " (last change \(dates.string(from: $0)))" } ?? ""))
        }
        if report.suites.isEmpty {
            lines.append("pending changes: none (no suite has synced on this machine)")
        }
        for suite in report.suites {
            if let problem = suite.problem {
                lines.append("\(suite.suite): \(problem)")
                continue
            }
            lines.append(
                "\(suite.suite): \(suite.pendingChanges) pending change(s), last sync "
                    + (suite.lastSync.map { dates.string(from: $0) } ?? "never"))
        }
        return lines.joined(separator: "\n")
    }

    /// Runs async work from this synchronous command, with a 10-second limit.
    static func wait<Result: Sendable>(_ work: @escaping @Sendable () async throws -> Result) throws -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            let result: Swift.Result<Result, any Error>
            do {
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            task.cancel()
            throw PostgresSyncError("the server did not answer within 10 seconds")
        }
        guard let result = outcome.withLock({ $0 }) else {
            throw PostgresSyncError("the status check ended without a result")
        }
        return try result.get()
    }
}
