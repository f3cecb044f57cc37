import Foundation
import TestSupport
import Testing

/// Real processes syncing through a real PostgreSQL server (`Tests/postgres-cluster.sh`).
@Suite("Sync through PostgreSQL", .enabled(if: PostgresCluster.isAvailable), .postgresCluster, .mayBlock)
struct PostgresSyncTests {
    let directory: TemporaryDirectory
    let namespace = "com.example.sync-\(UUID().uuidString.prefix(8))"

    init() throws {
        directory = try TemporaryDirectory()
    }

    var cluster: PostgresCluster {
        get throws {
            guard let cluster = PostgresCluster.shared else { throw SyncProcess.Failure(description: "no cluster") }
            return cluster
        }
    }

    func machine(
        _ name: String, url: String? = nil, keys: [String], clockOffset: Double = 0, debug: Bool = false,
        passphrase: String? = nil
    ) async throws -> SyncProcess {
        try await SyncProcess(
            configDirectory: directory.machine(name), url: try url ?? cluster.url, namespace: namespace, keys: keys,
            clockOffset: clockOffset, debug: debug, passphrase: passphrase)
    }

    /// The value of `key` once every machine reads the same one. A machine that has pushed all it
    /// wrote (`waitForSyncCompletion`) may still be receiving the others' last changes, so one
    /// machine's value at one moment is not yet the final one.
    func agreedValue(of key: String, on machines: [SyncProcess]) async throws -> String {
        var values: [String] = []
        try await waitUntil("every machine to read one value of \(key), not \(values)") {
            values = []
            for machine in machines {
                values.append(try await machine.get(key))
            }
            return Set(values).count == 1
        }
        return values[0]
    }

    /// Machines with no key declared yet, each connected and caught up.
    func connectedMachines(_ names: [String], cluster: PostgresCluster) async throws -> [SyncProcess] {
        var machines: [SyncProcess] = []
        for name in names {
            let machine = try await machine(name, url: cluster.url, keys: [])
            try await machine.waitForSync()
            machines.append(machine)
        }
        return machines
    }

    @Test func twoMachinesConvergeAndObserversSeeRemoteChanges() async throws {
        let a = try await machine("a", keys: ["mode", "name"])
        let b = try await machine("b", keys: ["mode", "name"])
        try await b.send("watch mode", answer: "ok")
        try await b.send("observe mode", answer: "ok")
        try await a.waitForSync()
        try await b.waitForSync()

        try await a.set("mode", "dark")
        try await b.waitUntil("mode", is: "dark")
        _ = try await b.child.line { $0 == "updated mode dark" }
        _ = try await b.child.line { $0 == "observed mode (nil) dark" }

        try await b.set("name", "Ada")
        try await a.waitUntil("name", is: "Ada")

        // Resets propagate.
        try await a.send("reset mode", answer: "ok")
        try await b.waitUntil("mode", is: "(nil)")
        _ = try await b.child.line { $0 == "updated mode (nil)" }
    }

    @Test func fourMachinesRacingOnOneKeyConvergeToOneValue() async throws {
        var machines: [SyncProcess] = []
        for index in 0..<4 {
            machines.append(try await machine("m\(index)", keys: ["race"]))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, machine) in machines.enumerated() {
                group.addTask {
                    for round in 0..<20 {
                        try await machine.set("race", "m\(index)-\(round)")
                    }
                }
            }
            try await group.waitForAll()
        }
        for machine in machines {
            try await machine.waitForSync()
        }
        // After everyone pushed, let the last notifications arrive, then compare.
        let winner = try await agreedValue(of: "race", on: machines)
        #expect(winner.hasSuffix("-19"), "the winner is some machine's last write: \(winner)")
    }

    /// Keys declared after connecting, one at a time, as lazily initialized `static let` keys are:
    /// each machine writes 1,000 keys of its own and 20 shared ones, declares the others' keys when
    /// it first reads them, and every machine ends with every value.
    /// (Before keys joined in batches, each key added while connected cost a scan of the whole
    /// namespace: 300 keys a machine took 151 s here, and 1,000 did not converge in 25 minutes.)
    @Test(.timeLimit(.minutes(3))) func keysDeclaredAfterConnectingConvergeOnThreeMachines() async throws {
        try await PostgresCluster.with { cluster in
            let names = ["a", "b", "c"]
            let machines = try await connectedMachines(names, cluster: cluster)
            for (index, machine) in machines.enumerated() {
                try await machine.send("fill own-\(names[index]) 1000 from-\(names[index])", answer: "ok")
                try await machine.send("fill shared 20 \(names[index])", answer: "ok")
            }
            for machine in machines {
                for name in names {
                    try await waitUntil("every key of \(name) on every machine") {
                        try await machine.send("count own-\(name) 1000 from-\(name)", answer: "count") == "count 1000"
                    }
                }
            }
            // The shared keys: one value each, the same everywhere.
            for index in 0..<20 {
                _ = try await agreedValue(of: "shared-\(index)", on: machines)
            }
            for machine in machines {
                try await machine.waitForSync()
                #expect(try await machine.send("status", answer: "status").contains("pending=0"))
            }
        }
    }

    /// As above, through a server restart while the machines push, and one machine killed
    /// (SIGKILL) once its writes were acknowledged (flushed), then started again: every machine
    /// ends with every acknowledged value.
    @Test(.timeLimit(.minutes(4))) func keysDeclaredAfterConnectingConvergeThroughRestartsAndKills() async throws {
        try await PostgresCluster.with { cluster in
            let names = ["a", "b", "c"]
            var machines = try await connectedMachines(names, cluster: cluster)
            for (index, machine) in machines.enumerated() {
                try await machine.send("fill early-\(names[index]) 600 from-\(names[index])", answer: "ok")
            }
            try cluster.stop(mode: .immediate)
            try cluster.restart()
            for (index, machine) in machines.enumerated() {
                try await machine.send("fill late-\(names[index]) 600 from-\(names[index])", answer: "ok")
            }
            // c's writes are acknowledged, then c dies before it can push them all. Started again,
            // it declares one key of the suite: what its journal holds unpushed goes out, whether
            // or not those keys are declared again.
            try await machines[2].flush()
            machines[2].kill()
            machines[2] = try await machine("c", url: cluster.url, keys: ["started"])
            for machine in machines {
                for name in names {
                    for prefix in ["early", "late"] {
                        try await waitUntil("every \(prefix) key of \(name) on every machine") {
                            try await machine.send("count \(prefix)-\(name) 600 from-\(name)", answer: "count")
                                == "count 600"
                        }
                    }
                }
            }
            for machine in machines {
                try await machine.waitForSync()
                #expect(try await machine.send("status", answer: "status").contains("pending=0"))
            }
        }
    }

    /// Two processes of one user on one machine (one config directory) sync the same suite: a value
    /// one of them wrote or applied is in the journal before the other sees it in the suite's file,
    /// so the other never pushes it again as a change of its own. The server's records of each key
    /// all carry the clock of the process that wrote them.
    @Test func twoProcessesSyncingOneSuitePushEachChangeOnce() async throws {
        try await PostgresCluster.with { cluster in
            let first = try await machine("shared", url: cluster.url, keys: [])
            let second = try await machine("shared", url: cluster.url, keys: [])
            let other = try await machine("other", url: cluster.url, keys: [])
            for machine in [first, second, other] {
                try await machine.waitForSync()
            }
            try await first.send("fill local 300 from-first", answer: "ok")
            try await other.send("fill remote 300 from-other", answer: "ok")
            for machine in [first, second, other] {
                for (prefix, value) in [("local", "from-first"), ("remote", "from-other")] {
                    try await waitUntil("every \(prefix) key in every process") {
                        try await machine.send("count \(prefix) 300 \(value)", answer: "count") == "count 300"
                    }
                }
            }
            for machine in [first, second, other] {
                try await machine.waitForSync()
            }
            for prefix in ["local", "remote"] {
                let origins = try cluster.query(
                    "SELECT count(DISTINCT clock_origin) FROM defaults_sync_values WHERE key LIKE '\(prefix)-%'",
                    database: "defaults_sync")
                #expect(origins == ["1"], "the \(prefix) keys were pushed by \(origins) processes")
            }
        }
    }

    /// An observer of a synced key that waits for another thread writing another synced key, as
    /// a handler that hands work to a queue and waits for it does: applying the remote value holds
    /// no lock the other write needs, so both finish.
    @Test func anObserverWaitingOnAWriteOfAnotherSyncedKeyFinishes() async throws {
        let a = try await machine("a", keys: ["trigger", "reply"])
        let b = try await machine("b", keys: ["trigger", "reply"])
        try await b.send("relay trigger reply", answer: "ok")
        try await a.waitForSync()
        try await b.waitForSync()
        try await a.set("trigger", "go")
        _ = try await b.child.line { $0 == "relayed trigger go" }
        try await a.waitUntil("reply", is: "relayed-go")
    }

    /// Keys PostgreSQL refuses (a NUL in the name, a name over its index's limit) are set aside
    /// and reported; every other key goes on syncing, and waiting for sync returns.
    @Test func aRefusedKeyIsReportedAndTheOthersSync() async throws {
        try await PostgresCluster.with { cluster in
            let a = try await machine("a", url: cluster.url, keys: ["before", "after"])
            let b = try await machine("b", url: cluster.url, keys: ["before", "after"])
            try await a.waitForSync()
            try await a.set("before", "1")
            try await a.send("nul bad value", answer: "ok")
            // Letters in no pattern, so that the server cannot compress the name under its limit.
            var seed: UInt32 = 12_345
            let longName = String(
                (0..<4_000).map { _ in
                    seed = seed &* 1_103_515_245 &+ 12_345
                    return Character(UnicodeScalar(UInt8(97 + (seed >> 16) % 26)))
                })
            try await a.set(longName, "too long a name")
            try await a.set("after", "2")
            // Returns once what can be synced is, and says what could not.
            let waited = try await a.send("wait-at-most 120", answer: "status")
            #expect(waited.contains("pending=0 refused=2"), "\(waited)")
            try await b.waitUntil("before", is: "1")
            try await b.waitUntil("after", is: "2")
            let status = try await a.send("status", answer: "status")
            #expect(status.contains("refused=2"), "\(status)")
            #expect(status.contains("pending=0"), "\(status)")
            #expect(status.contains("the store refused"), "\(status)")
            // And later changes still sync.
            try await a.set("after", "3")
            try await b.waitUntil("after", is: "3")
        }
    }

    /// The rows of this test's namespace, each `key hex(value)`: what the database holds.
    func storedRows(_ cluster: PostgresCluster) throws -> [String] {
        try cluster.query(
            "SELECT key || ' ' || encode(value, 'hex') FROM defaults_sync_values WHERE namespace = '\(namespace)' ORDER BY key",
            database: "defaults_sync")
    }

    static func hex(_ text: String) -> String {
        text.utf8.map { String(format: "%02x", $0) }.joined()
    }

    /// End to end: machines with the passphrase sync, and the database holds neither a key's name
    /// nor a value, in text or in hex.
    @Test func endToEndEncryptedMachinesSyncAndTheDatabaseHoldsNothingInClear() async throws {
        let cluster = try cluster
        let passphrase = "correct horse battery staple"
        let a = try await machine("a", keys: ["account-email"], passphrase: passphrase)
        let b = try await machine("b", keys: ["account-email"], passphrase: passphrase)
        try await a.set("account-email", "ada@example.com")
        try await b.waitUntil("account-email", is: "ada@example.com")
        // Keys declared later, on either side, join too.
        try await b.set("favorite-color", "vermilion")
        try await a.waitUntil("favorite-color", is: "vermilion")
        try await a.waitForSync()
        try await b.waitForSync()

        let rows = try storedRows(cluster)
        #expect(rows.count == 4, "two keys, the check record and the namespace head: \(rows)")
        let dump = rows.joined(separator: "\n")
        for clear in ["account-email", "favorite-color", "ada@example.com", "vermilion"] {
            #expect(!dump.contains(clear) && !dump.contains(Self.hex(clear)), "\(clear) is in the database")
        }
    }

    /// A machine given another passphrase reports it, reads nothing and writes nothing; its keys
    /// go on working locally.
    @Test func aWrongPassphraseIsReportedAndOverwritesNothing() async throws {
        let cluster = try cluster
        let a = try await machine("a", keys: ["shared"], passphrase: "the right one")
        try await a.set("shared", "from-a")
        try await a.waitForSync()
        let before = try storedRows(cluster)

        let c = try await machine("c", keys: ["shared"], passphrase: "another one")
        try await c.set("shared", "from-c")
        try await waitUntil("the wrong passphrase to be reported") {
            try await c.send("status", answer: "status").contains("passphrase does not open")
        }
        // The log is another pipe than the status's answer: it may come in a little later.
        try await waitUntil("the wrong passphrase to be logged") { c.log.contains("passphrase does not open") }
        #expect(try await c.get("shared") == "from-c", "local use goes on")
        #expect(try storedRows(cluster) == before, "nothing written")
        #expect(try await a.get("shared") == "from-a")

        let b = try await machine("b", keys: ["shared"], passphrase: "the right one")
        try await b.waitUntil("shared", is: "from-a")
    }

    @Test(arguments: PostgresCluster.StopMode.allCases)
    func aServerOutageLosesNoAcknowledgedWrite(stop mode: PostgresCluster.StopMode) async throws {
        try await PostgresCluster.with { cluster in
            let keys = (0..<5).flatMap { ["a\($0)", "b\($0)"] } + ["shared"]
            let a = try await machine("a", url: cluster.url, keys: keys, debug: true)
            let b = try await machine("b", url: cluster.url, keys: keys)
            try await a.waitForSync()
            try await b.waitForSync()

            try cluster.stop(mode: mode)
            for index in 0..<5 {
                try await a.set("a\(index)", "from-a-\(index)")
                try await b.set("b\(index)", "from-b-\(index)")
            }
            try await a.set("shared", "a-offline")
            // Timestamps count milliseconds: two writes in the same one are ordered by origin.
            try await Task.sleep(for: .milliseconds(5))
            try await b.set("shared", "b-offline")
            try await a.flush()  // acknowledged: durable on each machine
            try await b.flush()
            #expect(try await a.send("status", answer: "status").contains("pending=6"))
            // Waiting with a timeout returns, and says what is still pending and for how long.
            let waited = try await a.send("wait-at-most 0.5", answer: "status")
            #expect(waited.contains("pending=6") && !waited.contains("lag=(none)"), "\(waited)")
            // Both have seen the server go (an event, not a time: a busy machine takes longer).
            for machine in [a, b] {
                try await waitUntil("the machine to see the server gone") {
                    try await machine.send("status", answer: "status").contains("connected=false")
                }
            }
            try cluster.restart()

            try await a.waitForSync()
            try await b.waitForSync()
            try await a.waitForSync()
            for index in 0..<5 {
                try await a.waitUntil("b\(index)", is: "from-b-\(index)")
                try await b.waitUntil("a\(index)", is: "from-a-\(index)")
            }
            // Both offline writes of `shared` were versioned; the later one (b's) wins everywhere.
            try await a.waitUntil("shared", is: "b-offline")
            try await b.waitUntil("shared", is: "b-offline")
            // The reconnection took what changed meanwhile, not every record's timestamp again.
            #expect(a.log.components(separatedBy: "caught up in full").count == 2, "\(a.log.suffix(3000))")
            #expect(a.log.contains("resumed with"), "\(a.log.suffix(3000))")
        }
    }

    @Test func aServerThatStopsAnsweringIsLeftAndSyncGoesOnOverANewConnection() async throws {
        try await PostgresCluster.with { cluster in
            let a = try await machine("a", url: cluster.url, keys: ["frozen"])
            let b = try await machine("b", url: cluster.url, keys: ["frozen"])
            try await a.waitForSync()
            try await b.waitForSync()

            // Freeze the server processes of both machines' connections: the sockets stay open and
            // nothing answers, as when the server's machine vanishes from the network.
            let frozen = try cluster.backends(of: "defaults")
            #expect(frozen.count == 4, "two connections per machine, one listening: \(frozen)")
            for pid in frozen { kill(pid, SIGSTOP) }
            defer {
                for pid in frozen { kill(pid, SIGCONT) }
            }

            // `a`'s push gets no answer and `b` hears of nothing on its frozen connection: both must
            // give up their connection, reconnect and catch up.
            try await a.set("frozen", "after-the-freeze")
            try await b.waitUntil("frozen", is: "after-the-freeze")
            try await a.waitForSync()
            let status = try await a.send("status", answer: "status")
            #expect(status.contains("connected=true pending=0"), "\(status)")
        }
    }

    @Test func aMachineKilledBeforePushingPushesOnItsNextStart() async throws {
        let nowhere = "postgres://defaults:x@127.0.0.1:\(try PostgresCluster.freePort())/none?sslmode=disable"
        let first = try await machine("a", url: nowhere, keys: ["setting"])
        try await first.set("setting", "written-offline")
        try await first.flush()
        first.kill()

        let again = try await machine("a", keys: ["setting"])
        try await again.waitForSync()
        let other = try await machine("b", keys: ["setting"])
        try await other.waitUntil("setting", is: "written-offline")
    }

    @Test func aMachineWhoseClockIsAnHourBehindDoesNotLoseNewerWrites() async throws {
        let onTime = try await machine("on-time", keys: ["level"])
        let behind = try await machine("behind", keys: ["level"], clockOffset: -3600)
        try await onTime.set("level", "first")
        try await behind.waitUntil("level", is: "first")
        // Its wall clock says an hour ago, but it has seen "first": its change is newer.
        try await behind.set("level", "second")
        try await behind.waitForSync()
        try await onTime.waitUntil("level", is: "second")
        try await onTime.set("level", "third")
        try await behind.waitUntil("level", is: "third")
    }

    /// Both offline, the machine whose clock is an hour behind writes last, in real time: the
    /// hybrid clock orders by what each machine knew, so the on-time machine's write, stamped an
    /// hour later, wins on both (the README's "Conflicts").
    @Test func offlineTheWriteOfAClockAnHourBehindLosesToAnEarlierWriteOnTime() async throws {
        try await PostgresCluster.with { cluster in
            // Logging every decision: a failure (seen twice under load, never reproduced on demand)
            // then shows which write each machine recorded, received and pushed, and when.
            let onTime = try await machine("on-time", url: cluster.url, keys: ["level"], debug: true)
            let behind = try await machine(
                "behind", url: cluster.url, keys: ["level"], clockOffset: -3600, debug: true)
            try await onTime.waitForSync()
            try await behind.waitForSync()
            try cluster.stop()
            for machine in [onTime, behind] {
                try await waitUntil("the machine to see the server gone") {
                    try await machine.send("status", answer: "status").contains("connected=false")
                }
            }
            try await onTime.set("level", "on-time")
            try await behind.set("level", "behind, written later")
            try cluster.restart()
            try await onTime.waitForSync()
            try await behind.waitForSync()
            do {
                try await onTime.waitUntil("level", is: "on-time")
                try await behind.waitUntil("level", is: "on-time")
            } catch {
                Issue.record("on-time's log:\n\(onTime.log.suffix(6000))\nbehind's log:\n\(behind.log.suffix(6000))")
                throw error
            }
        }
    }

    /// Two machines writing the same keys at once, round after round: pushes lock rows in key
    /// order, so the server never reports a deadlock, and both end with the same values.
    @Test func machinesPushingOverlappingKeysAtOnceNeverDeadlock() async throws {
        try await PostgresCluster.with { cluster in
            let a = try await machine("a", url: cluster.url, keys: [])
            let b = try await machine("b", url: cluster.url, keys: [])
            try await a.waitForSync()
            try await b.waitForSync()
            for round in 0..<10 {
                async let fromA = a.send("fill overlap 200 a\(round)", answer: "ok")
                async let fromB = b.send("fill overlap 200 b\(round)", answer: "ok")
                _ = try await (fromA, fromB)
            }
            try await a.waitForSync()
            try await b.waitForSync()
            for index in stride(from: 0, to: 200, by: 13) {
                _ = try await agreedValue(of: "overlap-\(index)", on: [a, b])
            }
            let log = try String(contentsOfFile: cluster.directory + "/server.log", encoding: .utf8)
            #expect(!log.contains("deadlock detected"), "\(log.suffix(2000))")
        }
    }

    @Test func aWrongPasswordIsReportedAndLocalUseGoesOn() async throws {
        let wrong = try await machine("a", url: try cluster.url(password: "not-the-password"), keys: ["k"])
        try await wrong.set("k", "local")
        #expect(try await wrong.get("k") == "local")
        var status = ""
        try await waitUntil("the refused password in the status, not \(status)") {
            status = try await wrong.send("status", answer: "status")
            return status.contains("password authentication failed")
        }
        #expect(status.contains("password authentication failed for user \"defaults\""), "\(status)")
        #expect(status.contains("connected=false"))
        // Logged once the engine's lock is released, so perhaps just after the status says it.
        try await waitUntil("the refused password to be logged") {
            wrong.log.contains("password authentication failed")
        }
        #expect(!wrong.log.contains("not-the-password") && !status.contains("not-the-password"))
    }

    @Test func aMalformedURLIsReportedAndLocalUseGoesOn() async throws {
        let machine = try await machine("a", url: "postgres//nobody", keys: ["k"])
        #expect(machine.output.contains { $0.hasPrefix("error The database URL must look like") })
        try await machine.set("k", "still-works")
        #expect(try await machine.get("k") == "still-works")
    }

    @Test func aValueOverOneMegabyteIsRefusedAndReported() async throws {
        let a = try await machine("a", keys: ["blob"])
        let b = try await machine("b", keys: ["blob"])
        // Connected first: a connection made after the refusal would clear the status's last error.
        try await a.waitForSync()
        try await a.send("big blob 1100000", answer: "ok")
        let status = try await a.send("status", answer: "status")
        #expect(status.contains("over the 1 MB limit"), "\(status)")
        #expect(a.log.contains("over the 1 MB limit"))
        try await a.waitForSync()
        #expect(try await b.get("blob") == "(nil)")
        // The local value is kept, not truncated; a smaller one syncs again.
        try await a.set("blob", "small")
        try await b.waitUntil("blob", is: "small")
    }

    @Test func onFirstConnectionRemoteValuesWinOverNeverSyncedOnesAndNewKeysArePushed() async throws {
        let a = try await machine("a", keys: ["theme"])
        try await a.set("theme", "remote")
        try await a.waitForSync()
        try await a.quit()

        // `b` wrote both keys before it ever synced.
        let offline = try await machine("b", url: "", keys: ["theme", "font"])
        try await offline.set("theme", "stale")
        try await offline.set("font", "mono")
        try await offline.quit()

        let b = try await machine("b", keys: ["theme", "font"])
        try await b.waitForSync()
        try await b.waitUntil("theme", is: "remote")
        let c = try await machine("c", keys: ["theme", "font"])
        try await c.waitUntil("font", is: "mono")
    }
}
