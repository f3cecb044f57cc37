import Defaults
import Foundation
import TestSupport
import Testing

/// The hybrid logical clock between machines, through the in-memory server: a machine
/// (`DefaultsSyncTestingHelper`, a program whose keys are lazy `static let`s of the standard suite)
/// whose wall clock runs an hour behind, and another machine on time (the helper's peer, pushing
/// through the same server). What `PostgresSyncTests` shows through PostgreSQL, on every machine.
@Suite(.enabled(if: EngineMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct EngineClockTests {
    /// Its wall clock says an hour ago, but it has seen the other machine's write: its own change
    /// is newer, and wins everywhere; the other machine's next write wins in turn.
    @Test func aMachineWhoseClockIsAnHourBehindDoesNotLoseNewerWrites() async throws {
        let directory = try EngineDirectory()
        let machine = try await EngineMachine(in: directory, arguments: ["--clock-offset", "-3600"])
        let wallClock = try await machine.wallClock()
        #expect(EngineMachine.now - wallClock > 3_000_000, "the machine's wall clock runs an hour behind")
        #expect(try await machine.get("level") == "(nil)")  // the key is declared at its first use
        _ = try await machine.waitForSync()

        try await machine.send("peer-set level first")
        try await machine.waitUntil("the other machine's value to be applied") {
            try await machine.get("level") == "first"
        }
        let first = try await machine.serverStamp("level")

        try await machine.set("level", "second")
        _ = try await machine.waitForSync()
        #expect(try await machine.get("level") == "second")
        #expect(try await machine.onServer("level") == "second")
        try await machine.waitUntil("the other machine to receive it") {
            try await machine.received("level") == "second"
        }
        let second = try await machine.serverStamp("level")
        #expect(second > first)
        #expect(second.wallTime >= first.wallTime, "stamped after what it saw, not by its wall clock: \(second)")
        #expect(second.wallTime - wallClock > 3_000_000, "\(second)")

        // The other machine, on time, has seen it: its next write is newer still.
        try await machine.send("peer-set level third")
        try await machine.waitUntil("the other machine's newer value to be applied") {
            try await machine.get("level") == "third"
        }
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("level") == "third")
        #expect(try await machine.get("level") == "third")
        try await machine.quit()
    }

    /// A record stamped days ahead (a broken clock, a hostile writer) is kept aside, reported and
    /// never applied, and the machine's clock does not take it in: its later changes are stamped
    /// by its own time, not near the record's.
    @Test func aRecordStampedDaysAheadIsKeptAsideAndLeavesTheClockAlone() async throws {
        let directory = try EngineDirectory()
        let machine = try await EngineMachine(in: directory, arguments: [])
        #expect(try await machine.get("level") == "(nil)")
        _ = try await machine.waitForSync()
        try await machine.set("level", "mine")
        _ = try await machine.waitForSync()

        let twoDaysAhead = EngineMachine.now + 2 * 86_400_000
        try await machine.send("peer-set-at level \(twoDaysAhead) hostile")
        try await machine.waitUntil("the record to be kept aside") {
            try await machine.send("status", answer: "status").contains("aside=level")
        }
        #expect(try await machine.get("level") == "mine")
        // The key is not lost to the record: the next change replaces it on the server.
        try await machine.set("level", "mine-again")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("level") == "mine-again")

        try await machine.set("race", "later")
        _ = try await machine.waitForSync()
        let stamp = try await machine.serverStamp("race")
        #expect(stamp.wallTime < EngineMachine.now + 3_600_000, "stamped by its own clock: \(stamp)")
        try await machine.quit()
    }

    /// Offline, the machine whose clock is an hour behind writes after the other machine did, in
    /// real time: the hybrid clock orders by what each machine knew, so the write on time, stamped
    /// an hour later, wins on both (the README's "Conflicts").
    @Test func offlineTheWriteOfAClockAnHourBehindLosesToAnEarlierWriteOnTime() async throws {
        let directory = try EngineDirectory()
        let machine = try await EngineMachine(in: directory, arguments: ["--clock-offset", "-3600"])
        #expect(try await machine.get("level") == "(nil)")
        _ = try await machine.waitForSync()
        try await machine.send("disconnect")
        try await machine.waitUntil("the machine to see the server gone") {
            try await machine.send("status", answer: "status").contains("connected=false")
        }

        try await machine.send("peer-set level on-time")
        try await machine.set("level", "behind-written-later")
        #expect(try await machine.get("level") == "behind-written-later", "local use goes on")

        try await machine.send("reconnect")
        _ = try await machine.waitForSync()
        try await machine.waitUntil("the write on time to win here") {
            try await machine.get("level") == "on-time"
        }
        _ = try await machine.waitForSync()
        #expect(try await machine.get("level") == "on-time")
        #expect(try await machine.onServer("level") == "on-time")
        #expect(try await machine.serverStamp("level").origin == "peer", "the server kept the write on time")
        #expect(try await machine.received("level") == "(none)", "the write behind was never stored")
        try await machine.quit()
    }
}

/// A directory of one machine, kept across its runs (its suites and journals), removed at the end.
final class EngineDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "engine-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A run of `DefaultsSyncTestingHelper` as a program syncing its own keys: lazy `static let`s of
/// `Defaults.Keys` in the standard suite (`level` and `race`, `String?`; `colorScheme` and
/// `font`, `String` with the default `system`), declared at their first use. The helper's peer,
/// and its racers, are the other machines, at the store's level on the same in-memory server.
final class EngineMachine: HelperProcess {
    /// Now, in milliseconds since 1970, as timestamps count.
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    let child: ChildProcess

    /// - Parameter arguments: the helper's: `--clock-offset SECONDS`, `--store none` (no store:
    ///   a program that does not sync yet), `--offline yes` (no store reachable until `reconnect`).
    init(in directory: EngineDirectory, arguments: [String] = []) async throws {
        // No administrator's file of the test machine's own.
        let environment = ["XDG_CONFIG_HOME": directory.url.path, "XDG_CONFIG_DIRS": directory.url.path]
        child = try ChildProcess(Self.helperPath, arguments, environment: environment, input: .pipe)
        _ = try await child.line { $0 == "ready" }
    }

    /// What the program reads of its key `key` (`(nil)`: no value).
    func get(_ key: String) async throws -> String { try await value("app-get", key, answer: "value") }
    func set(_ key: String, _ value: String) async throws { try await send("app-set \(key) \(value)") }
    /// What the other machine reads of `key` on the server (`(none)`: no record).
    func onServer(_ key: String) async throws -> String { try await value("peer-get", key, answer: "peer") }
    /// The last value of `key` the server delivered to the other machine (`(none)`: none).
    func received(_ key: String) async throws -> String { try await value("received", key, answer: "received") }

    /// The timestamp of the server's record of `key`.
    func serverStamp(_ key: String) async throws -> SyncTimestamp {
        let text = try await value("server-stamp", key, answer: "stamp")
        guard let timestamp = SyncTimestamp(text) else {
            throw HelperFailure(description: "no record of \(key): \(text)")
        }
        return timestamp
    }

    /// The machine's wall clock, in milliseconds since 1970.
    func wallClock() async throws -> Int64 {
        let answer = try await send("wall-clock", answer: "wall-clock ")
        guard let milliseconds = Int64(answer.dropFirst("wall-clock ".count)) else {
            throw HelperFailure(description: answer)
        }
        return milliseconds
    }
}
