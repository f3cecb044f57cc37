import ArgumentParser
import Defaults
import DefaultsTerminalText
import Foundation
import Synchronization

/// `defaults-sync status`: whether the store is reachable and what it holds for the namespace,
/// the sync service asked through `DefaultsSyncStore` as the library asks it, a PostgreSQL database
/// only read (nothing created or migrated); what is pending here, and when each suite last synced.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show whether the sync store is reachable, its records, the pending changes and the last sync time.",
        discussion: """
            The store is the one $\(DefaultsSyncTool.urlVariable) names: \
            postgres://user:password@host:5432/database for PostgresSyncStore's database, with \
            $\(DefaultsSyncTool.namespaceVariable) naming the application's namespace (without it, \
            only the server is checked); or the sync service's wss://host (ws://host:port on \
            loopback or a private network) for SyncServiceStore, with a token in \
            $\(DefaultsSyncTool.tokenVariable) (never on the command line, where ps shows it), which \
            names the user and the namespace. The namespace's records are listed as stored: end \
            to end encrypted ones under \
            hashed names, with the encryption's check and head records (no passphrase is read). The \
            last change is the newest record's version, by the clock of the machine that wrote it. \
            Pending changes and sync times are read from the sync journals in \
            $XDG_CONFIG_HOME/.defaults-sync (or ~/.config/.defaults-sync).

            The status never writes: a PostgreSQL database is read in one read-only transaction \
            (which tables it holds, at which schema version, then the namespace's rows), so a role \
            with only CONNECT on the database and SELECT on defaults_sync_values and \
            defaults_sync_schema may run it. A database without any sync table is reported with 0 \
            records (nothing has synced through it yet), and none is created; one at an older \
            schema has its records counted as they are, not migrated. The sync service is asked \
            what the library asks it: it connects, then lists the records.

            Exits with status 1, the report naming the problem (errorKind and problems in JSON), \
            when no store is configured, its URL cannot be read or has another scheme, the token \
            is missing, malformed or refused, the store cannot be reached or does not answer \
            within --timeout seconds, a postgres:// URL names the sync service's database (ask the \
            service at its wss:// URL with a token instead) or a database whose store schema is \
            newer than this program's, or a journal cannot be read.
            """
    )

    @Flag(help: "Print JSON.")
    var json = false

    @Option(help: "How many seconds to wait for the store at most (1...600).")
    var timeout = 10

    func validate() throws {
        guard (1...600).contains(timeout) else {
            throw ValidationError("--timeout must be between 1 and 600 seconds")
        }
    }

    struct Report: Encodable {
        struct Suite: Encodable {
            var suite: String
            /// Pushed at a syncing program's next push.
            var pendingChanges: Int
            /// Set aside: refused by the store when last pushed, or of keys the administrator manages.
            var refusedChanges: Int
            var managedChanges: Int
            var lastSync: Date?
            /// Why the suite's journal could not be read.
            var problem: String?
        }

        /// Whether nothing failed (the command then exits with 0).
        var ok: Bool { problems.isEmpty }
        var store: String?
        /// `postgres` or `sync-service`.
        var storeKind: String?
        var connected: Bool
        /// Why the store could not be asked.
        var error: String?
        var errorKind: StatusProblem.Kind?
        var serverRecords: Int?
        var serverLastChange: Date?
        /// What the report says of the store besides: a database nothing has synced through, a
        /// schema older than this program's.
        var note: String?
        var suites: [Suite]
        /// Every problem: the store's and the journals'.
        var problems: [StatusProblem]

        enum CodingKeys: String, CodingKey {
            case ok, store, storeKind, connected, error, errorKind, serverRecords, serverLastChange, note, suites
            case problems
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ok, forKey: .ok)
            try container.encodeIfPresent(store, forKey: .store)
            try container.encodeIfPresent(storeKind, forKey: .storeKind)
            try container.encode(connected, forKey: .connected)
            try container.encodeIfPresent(error, forKey: .error)
            try container.encodeIfPresent(errorKind, forKey: .errorKind)
            try container.encodeIfPresent(serverRecords, forKey: .serverRecords)
            try container.encodeIfPresent(serverLastChange, forKey: .serverLastChange)
            try container.encodeIfPresent(note, forKey: .note)
            try container.encode(suites, forKey: .suites)
            try container.encode(problems, forKey: .problems)
        }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        func variable(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap {
                $0.isEmpty ? nil : $0
            }
        }
        var report = Report(connected: false, suites: [], problems: [])
        do {
            let store = try StatusStore.make(
                url: variable(DefaultsSyncTool.urlVariable), namespace: variable(DefaultsSyncTool.namespaceVariable),
                token: variable(DefaultsSyncTool.tokenVariable), timeout: .seconds(timeout))
            report.store = store.label
            report.storeKind = store.kind
            let view = try Self.wait(seconds: timeout, for: store.label) { try await store.view() }
            report.connected = true
            report.serverRecords = view.records
            report.serverLastChange = view.lastChange
            report.note = view.note
        } catch {
            let problem = error as? StatusProblem ?? StatusProblem(.unreachable, "\(error)")
            report.error = problem.message
            report.errorKind = problem.kind
            report.problems.append(problem)
        }
        report.suites = SyncJournal.summaries().map {
            Report.Suite(
                suite: $0.suite, pendingChanges: $0.pendingChanges, refusedChanges: $0.refusedChanges,
                managedChanges: $0.managedChanges, lastSync: $0.lastSync, problem: $0.problem)
        }
        if let problem = Self.journalDirectoryProblem() {
            report.problems.append(problem)
        }
        for suite in report.suites {
            if let problem = suite.problem {
                report.problems.append(StatusProblem(.unreadableJournal, "\(suite.suite): \(problem)"))
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            print(TerminalText.jsonEscaped(String(decoding: try encoder.encode(report), as: UTF8.self)))
        } else {
            print(Self.text(report))
        }
        if !report.ok {
            throw ExitCode.failure
        }
    }

    /// Why the journals' directory cannot be listed, when it is there; the summaries would
    /// otherwise show it as no suite having synced.
    static func journalDirectoryProblem() -> StatusProblem? {
        let directory = FileSuite.defaultDirectory.appendingPathComponent(".defaults-sync", isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else { return nil }
        guard isDirectory.boolValue else {
            return StatusProblem(.unreadableJournal, "\(directory.path) is not a directory of sync journals")
        }
        do {
            _ = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            return nil
        } catch {
            return StatusProblem(.unreadableJournal, "\(directory.path) could not be listed: \(error)")
        }
    }

    /// The report as people read it, every line escaped as `TerminalText` escapes outside text:
    /// suite names, the store's errors and notes come from files, the URL and the store.
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
        if let note = report.note {
            lines.append("note: \(note)")
        }
        for problem in report.problems where problem.kind == .unreadableJournal {
            lines.append("error: \(problem.message)")
        }
        if report.suites.isEmpty {
            lines.append("pending changes: none (no suite has synced on this machine)")
        }
        for suite in report.suites where suite.problem == nil {
            var line = "\(suite.suite): \(suite.pendingChanges) pending change(s)"
            if suite.refusedChanges > 0 {
                line += ", \(suite.refusedChanges) refused by the store (tried again when changed)"
            }
            if suite.managedChanges > 0 {
                line += ", \(suite.managedChanges) of managed keys (pushed once no longer managed)"
            }
            lines.append(line + ", last sync " + (suite.lastSync.map { dates.string(from: $0) } ?? "never"))
        }
        return lines.map { TerminalText.escaped($0) }.joined(separator: "\n")
    }

    /// Runs async work from this synchronous command, for `seconds` at most: a store that never
    /// answers fails the command rather than hanging it.
    static func wait<Result: Sendable>(
        seconds: Int, for store: String, _ work: @escaping @Sendable () async throws -> Result
    ) throws -> Result {
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
        if done.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
            task.cancel()
            throw StatusProblem(.timedOut, "\(store): no answer within \(seconds) s")
        }
        guard let result = outcome.withLock({ $0 }) else {
            throw StatusProblem(.unreachable, "\(store): the status check ended without a result")
        }
        return try result.get()
    }
}
