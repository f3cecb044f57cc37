import Defaults
import Foundation
import TestSupport
import Testing

/// Machines converge, through the in-memory server: a program (`DefaultsSyncTestingHelper`, see
/// ``EngineMachine``) and other machines at the store's level on the same server. What
/// `PostgresSyncTests` shows through PostgreSQL, on every machine.
@Suite(.enabled(if: EngineMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct EngineConvergenceTests {
    /// A program that never synced (no store) wrote two keys; its next run syncs. The value another
    /// machine wrote before, though older in real time, wins over the one never synced, which
    /// has no version; the key no other machine has is pushed.
    @Test func onFirstConnectionRemoteValuesWinOverNeverSyncedOnesAndNewKeysArePushed() async throws {
        let directory = try EngineDirectory()
        let before = EngineMachine.now
        let unsynced = try await EngineMachine(in: directory, arguments: ["--store", "none"])
        try await unsynced.set("colorScheme", "stale")
        try await unsynced.set("font", "mono")
        #expect(try await unsynced.get("colorScheme") == "stale")
        try await unsynced.quit()

        // The next run syncs, its store not reachable yet; another machine wrote `colorScheme`
        // before the first run did.
        let machine = try await EngineMachine(in: directory, arguments: ["--offline", "yes"])
        try await machine.send("peer-set-at colorScheme \(before) remote")
        #expect(try await machine.get("colorScheme") == "stale")
        #expect(try await machine.get("font") == "mono")

        try await machine.send("reconnect")
        _ = try await machine.waitForSync()
        try await machine.waitUntil("the remote value to win") {
            try await machine.get("colorScheme") == "remote"
        }
        try await machine.waitUntil("the new key to reach the other machine") {
            try await machine.received("font") == "mono"
        }
        _ = try await machine.waitForSync()
        #expect(try await machine.get("colorScheme") == "remote")
        #expect(try await machine.onServer("colorScheme") == "remote")
        #expect(try await machine.received("colorScheme") == "(none)", "the value never synced was not pushed")
        #expect(try await machine.onServer("font") == "mono")
        #expect(try await machine.get("font") == "mono")
        try await machine.quit()
    }

    /// The machine and three others write one key at once, round after round (the others as long
    /// as the machine, or longer, so that either may write last): every machine ends with the value
    /// of the newest timestamp, some writer's last write, and the machine's observers
    /// (`Defaults.observe`, `Defaults.updates`) have seen it last.
    @Test(arguments: [(machineRounds: 20, othersRounds: 20), (machineRounds: 20, othersRounds: 60)])
    func theMachineAndPeersRacingOnOneKeyConvergeToTheNewestValue(machineRounds: Int, othersRounds: Int)
        async throws
    {
        let directory = try EngineDirectory()
        let machine = try await EngineMachine(in: directory)
        try await machine.send("racers 3")
        #expect(try await machine.get("race") == "(nil)")
        try await machine.send("app-observe race")
        _ = try await machine.waitForSync()

        try await machine.send("race \(machineRounds) \(othersRounds)")
        _ = try await machine.waitForSync()
        var state = RaceState()
        try await machine.waitUntil("every machine to read the newest value: \(state)") {
            state = try RaceState(try await machine.send("race-state", answer: "race "))
            return state.hasConverged
        }
        let lastRound = state.newest.hasPrefix("machine-") ? machineRounds - 1 : othersRounds - 1
        #expect(state.newest.hasSuffix("-\(lastRound)"), "the winner is some machine's last write: \(state)")
        #expect(state.racers.count == 3)
        try await machine.waitUntil("the machine's observers to see the final value") {
            try await machine.value("app-observed", "race", answer: "observed")
                == "\(state.newest) \(state.newest)"
        }

        // Settled: nothing pending, nothing changes any more.
        _ = try await machine.waitForSync()
        let settled = try RaceState(try await machine.send("race-state", answer: "race "))
        #expect(settled.hasConverged && settled.newest == state.newest, "\(settled)")
        try await machine.quit()
    }
}

/// The helper's answer to `race-state`: `race newest=V@T server=V@T machine=V racers=V,V,…`.
private struct RaceState: CustomStringConvertible {
    var newest = ""
    var newestStamp = ""
    var server = ""
    var serverStamp = ""
    var machine = ""
    var racers: [String] = []
    var description = "(not asked yet)"

    init() {}

    init(_ answer: String) throws {
        description = answer
        var fields: [String: String] = [:]
        for field in answer.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw HelperFailure(description: "race-state: \(answer)") }
            fields[parts[0]] = parts[1]
        }
        func valueAndStamp(_ name: String) -> (String, String) {
            let parts = (fields[name] ?? "").split(separator: "@", maxSplits: 1).map(String.init)
            return (parts.first ?? "", parts.count == 2 ? parts[1] : "")
        }
        (newest, newestStamp) = valueAndStamp("newest")
        (server, serverStamp) = valueAndStamp("server")
        machine = fields["machine"] ?? ""
        racers = (fields["racers"] ?? "").split(separator: ",").map(String.init)
    }

    /// One value everywhere: the newest record any machine made is the server's, and every machine
    /// reads its value.
    var hasConverged: Bool {
        !newestStamp.isEmpty && server == newest && serverStamp == newestStamp && machine == newest
            && !racers.isEmpty && racers.allSatisfy { $0 == newest }
    }
}
