import Foundation
import TestSupport
import Testing

/// `Defaults.iCloud` takes a store's events no faster than it runs them: a store that reports
/// faster waits in `report` (so that a connection stops reading) while the engine has
/// `SyncEngine.queuedEventLimit` events queued, and every record is applied once it catches up.
/// The machine is a child process, as a process has one `Defaults.iCloud` (see TestingMachine).
@Suite(.enabled(if: FloodingMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct EngineBackpressureTests {
    /// `SyncEngine.queuedEventLimit`: the store's events queued and not yet run, the one running included.
    static let queuedEventLimit = 4

    @Test func aStoreFasterThanTheEngineWaitsForItAndLosesNothing() async throws {
        let (keys, events) = (20, 500)
        let machine = try await FloodingMachine()
        try await machine.send("flood-hold \(keys)")
        _ = try await machine.waitForSync()
        try await machine.send("flood-start \(events)")

        // An observer holds the engine at the first record; the store reports on meanwhile, as
        // fast as `report` returns.
        var state = FloodState()
        try await machine.waitUntil("the store to wait in a report, or to be done: \(state)") {
            state = try await machine.state()
            let isWaiting = state.isHolding && state.returned >= Self.queuedEventLimit && state.calls > state.returned
            return state.isFinished || isWaiting
        }
        // Time for reports that would return to do so: none may.
        try await Task.sleep(for: .milliseconds(300))
        state = try await machine.state()
        #expect(state.isHolding)
        #expect(!state.isFinished, "every report returned while the engine was held: \(state)")
        #expect(state.returned <= Self.queuedEventLimit, "\(state)")
        #expect(state.calls == state.returned + 1, "the store waits in a report: \(state)")

        try await machine.send("flood-release")
        try await machine.waitUntil("every record to be applied: \(state)") {
            state = try await machine.state()
            return state.isFinished && state.seen == keys * events
        }
        // Each key's values in the order reported, up to its last.
        let expected = (0..<keys).map { "\((events - 1) * keys + $0)" }.joined(separator: ",")
        let check = try await machine.send("flood-check", answer: "flood-check")
        #expect(check == "flood-check ordered=true values=\(expected)")
        try await machine.quit()
    }

    /// A report waiting for room returns when the application replaces the store (the store's
    /// task is cancelled then), though the engine is still held: the old store's events are not
    /// the new store's to run.
    @Test func aWaitingReportReturnsWhenTheStoreIsReplaced() async throws {
        let machine = try await FloodingMachine()
        try await machine.send("flood-hold 1")
        _ = try await machine.waitForSync()
        try await machine.send("flood-start 100")
        var state = FloodState()
        try await machine.waitUntil("the store to wait in a report: \(state)") {
            state = try await machine.state()
            return state.isHolding && state.returned >= Self.queuedEventLimit && state.calls > state.returned
        }
        try await machine.send("flood-replace")
        try await machine.waitUntil("the replaced store's reports to return: \(state)") {
            state = try await machine.state()
            return state.isFinished
        }
        #expect(state.isHolding, "the engine is still held: \(state)")
        try await machine.send("flood-release")
        _ = try await machine.waitForSync()
        try await machine.quit()
    }
}

/// What `flood-state` answers (Tests/SyncTestingHelper/main.swift).
struct FloodState: CustomStringConvertible {
    var calls = 0
    var returned = 0
    var isFinished = false
    var isHolding = false
    var seen = 0
    var description = "(not asked yet)"

    init() {}

    init(_ line: String) {
        description = line
        var fields: [String: String] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        calls = Int(fields["calls"] ?? "") ?? -1
        returned = Int(fields["returned"] ?? "") ?? -1
        isFinished = fields["finished"] == "true"
        isHolding = fields["holding"] == "true"
        seen = Int(fields["seen"] ?? "") ?? -1
    }
}

/// A `DefaultsSyncTestingHelper` whose `Defaults.iCloud` syncs through its flood store.
final class FloodingMachine: HelperProcess {
    let child: ChildProcess
    let directory: URL

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sync-flood-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        child = try ChildProcess(
            Self.helperPath, ["--store", "flood"], environment: ["XDG_CONFIG_HOME": directory.path], input: .pipe)
        _ = try await child.line { $0 == "ready" }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    func state() async throws -> FloodState {
        FloodState(try await send("flood-state", answer: "flood "))
    }
}
