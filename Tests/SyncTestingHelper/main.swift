// One machine of the in-memory sync tests: a process whose `Defaults.iCloud` syncs `String?` keys
// through an `InMemorySyncStore` of an `InMemorySyncServer` held in this very process, on which
// the test also drives a peer (another machine, at the store's level) and an attacker. A process
// has one `Defaults.iCloud`, and a test process must not connect one (other tests check that
// none is), so the machine is a child process, as with `Tests/SyncHelper`.
//
// Arguments: [--passphrase P]  (the machine and the peer are end-to-end encrypted with P)
//            [--offline yes]  (the machine's store starts disconnected: no store is reachable
//                             until `reconnect`)
// Environment: XDG_CONFIG_HOME (the machine's suite, its journal, its encryption state)
//
// Commands, one per line; each answers one line (`ok`, `error MESSAGE`, or as said):
//   set KEY VALUE | reset KEY | get KEY (value KEY VALUE) | status | wait-at-most SECONDS (status …)
//   peer-set KEY VALUE   the peer pushes VALUE for KEY, stamped by its own clock
//   peer-get KEY         peer KEY VALUE: what the peer reads of KEY on the server ((none): nothing)
//   set-integer KEY N | get-integer KEY (value KEY N)   an `Int` key, as another version declares it
//   peer-set-integer KEY N | peer-get-integer KEY (peer KEY N)   the same through the peer
//   peer-set-integer-old KEY N   the peer pushes N for KEY stamped with a time long past
//   store-integer KEY N  stores N under KEY in the suite, with no key (as an older version left it)
//   declare-renamed KEY FORMER[,OLDER…]   declares the `Int` key KEY, `migrating: .renamed(from:
//                        FORMER, OLDER…)`: the newer version of a program whose older versions
//                        sync it as FORMER (and OLDER before)
//   received KEY         received KEY VALUE: the last value of KEY delivered to the peer ((none))
//   disconnect | reconnect | fail-pushes N | fail-fetches N | refuse KEY   (the machine's store)
//   pushes               pushes N: the server's count
//   snapshot             keeps a copy of the server's records
//   rollback KEY         puts the snapshot's record of KEY back, as someone with the database could
//   rollback-all         puts every record of the snapshot back, the namespace's head included
//   unsealed-removal KEY a token holder without the passphrase pushes a removal of KEY's record,
//                        later than the record
//   remove-check         the same for the end-to-end encryption's check record
//   tampering            tampering N DESCRIPTIONS: what the machine's encryption detected
//   declared-get KEY | declared-set KEY VALUE   a key of the program's own, declared as users do
//                        (a lazy `static let` of `Defaults.Keys`, `String`, with a default): KEY is
//                        `theme` (default `light`) or `accent` (default `blue`); declared at its
//                        first use, as in a program
//   server-origin KEY    origin KEY ORIGIN: the origin of the timestamp of the server's record of
//                        KEY ((none): no record)
//   flush                writes every suite (and journal) to disk
//   journal              journal pending=N refused=R managed=M problem=P: the journal summary
//                        of the helper's suite
//                        (`SyncJournal.summaries()`), read from disk after a flush
//   quit
// `(nil)` stands for no value.
import Defaults
import DefaultsPropertyList
import DefaultsSyncEncryption
import DefaultsSyncTesting
import Foundation
import Synchronization

func reply(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst(), let value = arguments.popFirst() {
    options[argument] = value
}
let passphrase = options["--passphrase"]
let namespace = "sync-testing"

let server = InMemorySyncServer()
let machineStore = InMemorySyncStore(server: server, name: "machine")
let peerStore = InMemorySyncStore(server: server, name: "peer")
let attacker = InMemorySyncStore(server: server, name: "attacker")
let machine: any DefaultsSyncStore
let peer: any DefaultsSyncStore
var encrypted: EncryptedSyncStore?
var peerEncrypted: EncryptedSyncStore?
do {
    if let passphrase {
        let sealed = try EncryptedSyncStore(machineStore, passphrase: passphrase, namespace: namespace)
        let peerSealed = try EncryptedSyncStore(
            peerStore, passphrase: passphrase, namespace: namespace, stateDirectory: nil)
        (machine, peer, encrypted, peerEncrypted) = (sealed, peerSealed, sealed, peerSealed)
    } else {
        (machine, peer) = (machineStore, peerStore)
    }
} catch {
    reply("error \(error)")
    exit(1)
}

/// The name the server holds `key` under.
@MainActor func storedName(_ key: String) -> String {
    peerEncrypted?.storedName(forKey: key) ?? key
}

let received = Mutex<[String: String]>([:])
let peerClock = HybridLogicalClock(origin: "peer")
let runs = [
    Task.detached { [peer, peerClock] in
        await peer.run { event in
            guard case .received(let records) = event else { return }
            received.withLock { received in
                for record in records {
                    received[record.key] = text(record.value)
                    peerClock.receive(record.timestamp)
                }
            }
        }
    },
    // The attacker only pushes; its store must run to be connected.
    Task.detached { [attacker] in await attacker.run { _ in } },
]

func text(_ value: Data?) -> String {
    guard let value else { return "(nil)" }
    guard case .string(let text) = try? PropertyList.decodeValue(value) else { return "(not a string)" }
    return text
}

func encoded(_ text: String) throws -> Data {
    try PropertyList.encodeXML(text)
}

let suite = FileSuite(name: "sync-testing-helper")
nonisolated(unsafe) var keys: [String: Defaults.Key<String?>] = [:]

func key(_ name: String) -> Defaults.Key<String?> {
    if let key = keys[name] { return key }
    let key = Defaults.Key<String?>(name, suite: suite, iCloud: true)
    keys[name] = key
    return key
}

/// Keys of another value type, as another version of the program declares them.
nonisolated(unsafe) var integerKeys: [String: Defaults.Key<Int>] = [:]

func integerKey(_ name: String) -> Defaults.Key<Int> {
    if let key = integerKeys[name] { return key }
    let key = Defaults.Key<Int>(name, default: 0, suite: suite, iCloud: true)
    integerKeys[name] = key
    return key
}

// MARK: - EngineClockTests and EngineConvergenceTests (one block; two hooks below are marked with its name)
//
// Arguments: [--clock-offset SECONDS]  the machine's wall clock runs that far ahead (behind when
//                                      negative): the `HybridLogicalClock` given to
//                                      `Defaults.iCloud.use(_:clock:)` reads it
//            [--store none]            no store at all, as in a program that does not sync yet:
//                                      its `iCloud` keys are local keys
// Commands:
//   app-get KEY (value KEY VALUE) | app-set KEY VALUE   the program's own keys, lazy `static let`s
//                        of `Defaults.Keys` in the standard suite, declared at their first use:
//                        `level` and `race` (`String?`), `colorScheme` and `font` (`String`,
//                        default `system`)
//   app-observe KEY      observes `level` or `race` with `Defaults.observe` and `Defaults.updates`
//   app-observed KEY     observed KEY OBSERVED UPDATED: the last new value each of them delivered
//   wall-clock           wall-clock MS: the machine's wall clock (with its offset), in milliseconds
//   server-stamp KEY     stamp KEY TIMESTAMP: the timestamp of the server's record of KEY ((none))
//   peer-set-at KEY MS VALUE   the peer pushes VALUE for KEY stamped with the wall time MS
//   racers N             connects N more machines at the store's level, `racer-0`…, each with an
//                        on-time clock of its own and its view of the server: the newest record
//                        of each key it pushed or was delivered
//   race ROUNDS [RACER-ROUNDS]   all at once: the machine sets `race` to `machine-R` for R in
//                        0..<ROUNDS, and each racer I pushes `racer-I-R` for R in 0..<RACER-ROUNDS
//                        (ROUNDS unless given), one write after another (a millisecond apart, so
//                        that the writes of all interleave)
//   race-state           race newest=V@T server=V@T machine=V racers=V,V,…: the newest record any
//                        racer knows, the server's record, the machine's value, each racer's view

let engineClockOffset = Double(options["--clock-offset"] ?? "0") ?? 0
let engineMachineClock = HybridLogicalClock(wallClock: { Date().addingTimeInterval(engineClockOffset) })
let engineConnectsAStore = options["--store"] != "none"
let engineCommands: Set<String> = [
    "app-get", "app-set", "app-observe", "app-observed", "wall-clock", "server-stamp", "peer-set-at", "racers", "race",
    "race-state",
]

extension Defaults.Keys {
    static let level = Key<String?>("level", iCloud: true)
    static let race = Key<String?>("race", iCloud: true)
    static let colorScheme = Key<String>("colorScheme", default: "system", iCloud: true)
    static let font = Key<String>("font", default: "system", iCloud: true)
}

struct EngineCommandError: Error, CustomStringConvertible {
    let description: String
}

/// Another machine at the store's level: its store, its clock and its view of the server.
final class Racer: Sendable {
    let store: InMemorySyncStore
    let clock: HybridLogicalClock
    let view = Mutex<[String: SyncRecord]>([:])

    init(server: InMemorySyncServer, index: Int) {
        store = InMemorySyncStore(server: server, name: "racer-\(index)")
        clock = HybridLogicalClock(origin: "racer-\(index)")
    }

    /// Keeps `record` if it is newer than what the racer knows of its key.
    func know(_ record: SyncRecord) {
        view.withLock { view in
            if view[record.key].map({ $0.timestamp < record.timestamp }) ?? true {
                view[record.key] = record
            }
        }
    }
}

nonisolated(unsafe) var racers: [Racer] = []
nonisolated(unsafe) var racerRuns: [Task<Void, Never>] = []
nonisolated(unsafe) var appObservations: [Defaults.Observation] = []
/// The last new value `Defaults.observe` and `Defaults.updates` delivered, by key.
let appObserved = Mutex<[String: (observed: String, updated: String)]>([:])

func noteSeen(_ name: String, observed: String? = nil, updated: String? = nil) {
    appObserved.withLock { seen in
        var last = seen[name] ?? (observed: "(none)", updated: "(none)")
        last.observed = observed ?? last.observed
        last.updated = updated ?? last.updated
        seen[name] = last
    }
}

func optionalAppKey(_ name: String) throws -> Defaults.Key<String?> {
    switch name {
    case "level": .level
    case "race": .race
    default: throw EngineCommandError(description: "no optional key \(name)")
    }
}

func describeRecord(_ record: SyncRecord?) -> String {
    record.map { "\(text($0.value))@\($0.timestamp)" } ?? "(none)"
}

func engineCommand(_ words: [String]) async throws -> String {
    switch (words[0], words.count) {
    case ("app-get", 2):
        let value =
            switch words[1] {
            case "colorScheme": Defaults[.colorScheme]
            case "font": Defaults[.font]
            default: try Defaults[optionalAppKey(words[1])] ?? "(nil)"
            }
        return "value \(words[1]) \(value)"
    case ("app-set", 3):
        switch words[1] {
        case "colorScheme": Defaults[.colorScheme] = words[2]
        case "font": Defaults[.font] = words[2]
        default: Defaults[try optionalAppKey(words[1])] = words[2]
        }
        return "ok"
    case ("app-observe", 2):
        let name = words[1]
        let key = try optionalAppKey(name)
        appObservations.append(
            Defaults.observe(key, options: []) { change in
                noteSeen(name, observed: change.newValue ?? "(nil)")
            })
        let ready = AsyncStream<Void>.makeStream()
        racerRuns.append(
            Task.detached {
                var updates = Defaults.updates(key, initial: false).makeAsyncIterator()
                ready.continuation.finish()
                while let value = await updates.next() {
                    noteSeen(name, updated: value ?? "(nil)")
                }
            })
        for await _ in ready.stream {}
        return "ok"
    case ("app-observed", 2):
        let seen = appObserved.withLock { $0[words[1]] } ?? (observed: "(none)", updated: "(none)")
        return "observed \(words[1]) \(seen.observed) \(seen.updated)"
    case ("wall-clock", 1):
        return "wall-clock \(Int64((Date().addingTimeInterval(engineClockOffset).timeIntervalSince1970 * 1000)))"
    case ("server-stamp", 2):
        return "stamp \(words[1]) \(server.record(forKey: words[1])?.timestamp.description ?? "(none)")"
    case ("peer-set-at", 3):
        let rest = words[2].split(separator: " ", maxSplits: 1).map(String.init)
        guard rest.count == 2, let wallTime = Int64(rest[0]) else {
            throw EngineCommandError(description: "peer-set-at KEY MS VALUE")
        }
        let timestamp = SyncTimestamp(wallTime: wallTime, counter: 0, origin: "peer")
        try await peer.push([SyncRecord(key: words[1], value: try encoded(rest[1]), timestamp: timestamp)])
        return "ok"
    case ("racers", 2):
        for index in racers.count..<(racers.count + (Int(words[1]) ?? 0)) {
            let racer = Racer(server: server, index: index)
            racers.append(racer)
            racerRuns.append(
                Task.detached {
                    await racer.store.run { event in
                        guard case .received(let records) = event else { return }
                        for record in records {
                            racer.clock.receive(record.timestamp)
                            racer.know(record)
                        }
                    }
                })
        }
        while !racers.allSatisfy(\.store.isConnected) {
            try await Task.sleep(for: .milliseconds(10))
        }
        return "ok"
    case ("race", 2), ("race", 3):
        let rounds = Int(words[1]) ?? 0
        let racerRounds = words.count == 3 ? Int(words[2]) ?? 0 : rounds
        let everyRacer = racers
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<rounds {
                    Defaults[.race] = "machine-\(round)"
                    try await Task.sleep(for: .milliseconds(1))  // the writes spread over a few milliseconds
                }
            }
            for (index, racer) in everyRacer.enumerated() {
                group.addTask {
                    for round in 0..<racerRounds {
                        let record = SyncRecord(
                            key: "race", value: try encoded("racer-\(index)-\(round)"), timestamp: racer.clock.now())
                        try await racer.store.push([record])
                        racer.know(record)
                        try await Task.sleep(for: .milliseconds(1))
                    }
                }
            }
            try await group.waitForAll()
        }
        return "ok"
    case ("race-state", 1):
        let views = racers.map { $0.view.withLock { $0["race"] } }
        let newest = views.compactMap { $0 }.max { $0.timestamp < $1.timestamp }
        let racerValues = views.map { $0.map { text($0.value) } ?? "(none)" }
        return "race newest=\(describeRecord(newest)) server=\(describeRecord(server.record(forKey: "race"))) "
            + "machine=\(Defaults[.race] ?? "(nil)") racers=\(racerValues.joined(separator: ","))"
    default:
        throw EngineCommandError(description: "unknown command: \(words.joined(separator: " "))")
    }
}

// MARK: - End of the block of EngineClockTests and EngineConvergenceTests

// MARK: - EngineBackpressureTests (one block; two hooks below are marked with its name)
//
// Arguments: [--store flood]  the machine syncs through a `FloodStore` instead of the in-memory
//                             one: a store that reports records as fast as the library takes them
// Commands:
//   flood-hold KEYS      declares the `String?` keys flood-0…flood-(KEYS-1) and observes each: the
//                        first change an observer sees holds the engine's task until `flood-release`
//   flood-start EVENTS   the store reports EVENTS events, one after another as `report` returns,
//                        each of KEYS records: record I (I = event × KEYS + key) of key flood-key,
//                        value I, each later than the one before
//   flood-state          flood calls=C returned=R finished=B holding=B seen=S: reports started and
//                        returned, whether all have, whether an observer holds the engine now, and
//                        how many changes the observers saw
//   flood-release        lets the held observer go
//   flood-replace        the machine's in-memory store replaces the flood store (`use` again)
//   flood-check          flood-check ordered=B values=V,V,…: whether each key's observer saw its values
//                        in increasing order, and each key's value now

/// Runs the flood's producer on threads of its own: the engine's task, held by an observer, blocks
/// a thread of the cooperative pool, which may have no other.
final class FloodExecutor: TaskExecutor {
    static let shared = FloodExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: "FloodExecutor").async { job.runSynchronously(on: executor) }
    }
}

/// A store that holds nothing and reports, once started, records as fast as `report` returns.
final class FloodStore: DefaultsSyncStore {
    let description = "flood store"
    let calls = Atomic(0)
    let returned = Atomic(0)
    let isFinished = Atomic(false)
    let keys = Atomic(1)
    private let starts: AsyncStream<Int>
    private let start: AsyncStream<Int>.Continuation

    init() {
        (starts, start) = AsyncStream<Int>.makeStream()
    }

    func flood(events: Int) {
        start.yield(events)
    }

    func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        await report(.connected)
        await withTaskExecutorPreference(FloodExecutor.shared) {
            for await events in starts {
                let width = self.keys.load(ordering: .sequentiallyConsistent)
                let base = Int64(Date().timeIntervalSince1970 * 1000)
                for event in 0..<events {
                    let records = (0..<width).map { key in
                        let index = event * width + key
                        return SyncRecord(
                            key: "flood-\(key)", value: (try? encoded("\(index)")) ?? Data(),
                            timestamp: SyncTimestamp(wallTime: base + Int64(index), counter: 0, origin: "flood"))
                    }
                    calls.add(1, ordering: .sequentiallyConsistent)
                    await report(.received(records))
                    returned.add(1, ordering: .sequentiallyConsistent)
                }
                isFinished.store(true, ordering: .sequentiallyConsistent)
            }
        }
    }

    func timestamps() async throws -> [String: SyncTimestamp] { [:] }
    func records(forKeys keys: [String]) async throws -> [SyncRecord] { [] }
    func push(_ records: [SyncRecord]) async throws {}
}

let floodStore = options["--store"] == "flood" ? FloodStore() : nil
let floodCommands: Set<String> = [
    "flood-hold", "flood-start", "flood-state", "flood-release", "flood-replace", "flood-check",
]
let floodRelease = DispatchSemaphore(value: 0)
/// What the observers saw: each key's values in order, and whether one holds the engine now.
let floodSeen = Mutex<(values: [String: [Int]], hasHeld: Bool, isHolding: Bool)>(([:], false, false))
nonisolated(unsafe) var floodObservations: [Defaults.Observation] = []

func floodCommand(_ words: [String]) throws -> String {
    guard let floodStore else { throw EngineCommandError(description: "no flood store: --store flood") }
    switch (words[0], words.count) {
    case ("flood-hold", 2):
        let count = Int(words[1]) ?? 1
        floodStore.keys.store(count, ordering: .sequentiallyConsistent)
        for index in 0..<count {
            let name = "flood-\(index)"
            floodObservations.append(
                Defaults.observe(key(name), options: []) { change in
                    let mustHold = floodSeen.withLock { seen -> Bool in
                        seen.values[name, default: []].append(Int(change.newValue ?? "") ?? -1)
                        guard !seen.hasHeld else { return false }
                        seen.hasHeld = true
                        seen.isHolding = true
                        return true
                    }
                    if mustHold {
                        floodRelease.wait()
                        floodSeen.withLock { $0.isHolding = false }
                    }
                })
        }
        return "ok"
    case ("flood-start", 2):
        floodStore.flood(events: Int(words[1]) ?? 0)
        return "ok"
    case ("flood-state", 1):
        let (seen, isHolding) = floodSeen.withLock { seen in
            (seen.values.values.map(\.count).reduce(0, +), seen.isHolding)
        }
        return "flood calls=\(floodStore.calls.load(ordering: .sequentiallyConsistent)) "
            + "returned=\(floodStore.returned.load(ordering: .sequentiallyConsistent)) "
            + "finished=\(floodStore.isFinished.load(ordering: .sequentiallyConsistent)) "
            + "holding=\(isHolding) seen=\(seen)"
    case ("flood-release", 1):
        floodRelease.signal()
        return "ok"
    case ("flood-replace", 1):
        Defaults.iCloud.use(machine)
        return "ok"
    case ("flood-check", 1):
        let count = floodStore.keys.load(ordering: .sequentiallyConsistent)
        let values = floodSeen.withLock { $0.values }
        let isOrdered = values.values.allSatisfy { seen in zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 } }
        let now = (0..<count).map { Defaults[key("flood-\($0)")] ?? "(nil)" }
        return "flood-check ordered=\(isOrdered) values=\(now.joined(separator: ","))"
    default:
        throw EngineCommandError(description: "unknown command: \(words.joined(separator: " "))")
    }
}

// MARK: - End of the block of EngineBackpressureTests

func describe(_ status: SyncStatus) -> String {
    "status connected=\(status.isConnected) pending=\(status.pendingChanges) refused=\(status.refusedKeys.count) "
        + "aside=\(status.keptAsideKeys.joined(separator: ",")) error=\(status.lastError ?? "(none)")"
}

/// The program's own keys, declared as users declare them: lazy `static let`s, each declared (and
/// seen by sync) at its first use.
/// (`suite` inside `Defaults.Keys` names the keys' own property: the helper's suite is `programSuite` there.)
let programSuite = suite

extension Defaults.Keys {
    static let theme = Key<String>("theme", default: "light", suite: programSuite, iCloud: true)
    static let accent = Key<String>("accent", default: "blue", suite: programSuite, iCloud: true)
}

func declaredKey(_ name: String) -> Defaults.Key<String>? {
    switch name {
    case "theme": .theme
    case "accent": .accent
    default: nil
    }
}

if options["--offline"] == "yes" {
    machineStore.disconnect()
}
if let floodStore {  // EngineBackpressureTests: --store flood
    Defaults.iCloud.use(floodStore)
} else if engineConnectsAStore {  // EngineClockTests and EngineConvergenceTests: --store, --clock-offset
    Defaults.iCloud.use(machine, clock: engineMachineClock)
}
var snapshot: [String: SyncRecord] = [:]
reply("ready")

while let line = readLine() {
    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
    do {
        switch (words.first ?? "", words.count) {
        case ("set", 3):
            Defaults[key(words[1])] = words[2]
            reply("ok")
        case ("reset", 2):
            Defaults.reset(key(words[1]))
            reply("ok")
        case ("set-integer", 3):
            Defaults[integerKey(words[1])] = Int(words[2]) ?? 0
            reply("ok")
        case ("get-integer", 2):
            reply("value \(words[1]) \(Defaults[integerKey(words[1])])")
        case ("peer-set-integer", 3):
            let value = try PropertyList.encodeXML(Int(words[2]) ?? 0)
            try await peer.push([SyncRecord(key: words[1], value: value, timestamp: peerClock.now())])
            reply("ok")
        case ("peer-set-integer-old", 3):
            let value = try PropertyList.encodeXML(Int(words[2]) ?? 0)
            let old = SyncTimestamp(wallTime: 1, counter: 0, origin: "peer")
            try await peer.push([SyncRecord(key: words[1], value: value, timestamp: old)])
            reply("ok")
        case ("peer-get-integer", 2):
            let record = try await peer.records(forKeys: [words[1]]).first
            let value = record.flatMap { $0.value }.flatMap { try? PropertyList.decodeValue($0) }
            let text =
                if case .integer(let integer)? = value { "\(integer)" } else { value == nil ? "(none)" : "(other)" }
            reply("peer \(words[1]) \(text)")
        case ("store-integer", 3):
            // As an older version of the program left it: stored, with no key of this version.
            suite.set(Int(words[2]) ?? 0, forKey: words[1])
            reply("ok")
        case ("declare-renamed", 3):
            integerKeys[words[1]] = Defaults.Key<Int>(
                words[1], default: 0, suite: suite, iCloud: true,
                migrating: .renamed(from: words[2].split(separator: ",").map(String.init)))
            reply("ok")
        case ("problems", 1):
            reply("problems " + suite.problems.map { "\($0.kind):\($0.key ?? "-")" }.joined(separator: " "))
        case ("get", 2):
            reply("value \(words[1]) \(Defaults[key(words[1])] ?? "(nil)")")
        case ("status", 1):
            reply(describe(Defaults.iCloud.status))
        case ("wait-at-most", 2):
            reply(describe(await Defaults.iCloud.waitForSyncCompletion(timeout: .seconds(Double(words[1]) ?? 1))))
        case ("peer-set", 3):
            try await peer.push([SyncRecord(key: words[1], value: try encoded(words[2]), timestamp: peerClock.now())])
            reply("ok")
        case ("peer-get", 2):
            let record = try await peer.records(forKeys: [words[1]]).first
            reply("peer \(words[1]) \(record.map { text($0.value) } ?? "(none)")")
        case ("received", 2):
            reply("received \(words[1]) \(received.withLock { $0[words[1]] } ?? "(none)")")
        case ("disconnect", 1):
            machineStore.disconnect()
            reply("ok")
        case ("reconnect", 1):
            machineStore.reconnect()
            reply("ok")
        case ("fail-pushes", 2):
            machineStore.failNextPushes(Int(words[1]) ?? 0)
            reply("ok")
        case ("fail-fetches", 2):
            machineStore.failNextFetches(Int(words[1]) ?? 0)
            reply("ok")
        case ("refuse", 2):
            server.refusedKeys[storedName(words[1])] = "refused by the test"
            reply("ok")
        case ("pushes", 1):
            reply("pushes \(server.pushCount)")
        case ("snapshot", 1):
            snapshot = server.records
            reply("ok")
        case ("rollback", 2):
            server.overwrite(snapshot[storedName(words[1])].map { [$0] } ?? [])
            reply("ok")
        case ("rollback-all", 1):
            server.overwrite(Array(snapshot.values))
            reply("ok")
        case ("unsealed-removal", 2):
            try await pushLater(nil, over: storedName(words[1]))
            reply("ok")
        case ("remove-check", 1):
            try await pushLater(nil, over: "e2e1.check")
            reply("ok")
        case ("tampering", 1):
            let found = encrypted?.detectedTampering ?? []
            reply("tampering \(found.count) \(found.map(\.description).joined(separator: " | "))")
        case ("declared-get", 2):
            guard let key = declaredKey(words[1]) else { throw HelperError.unknownKey(words[1]) }
            reply("value \(words[1]) \(Defaults[key])")
        case ("declared-set", 3):
            guard let key = declaredKey(words[1]) else { throw HelperError.unknownKey(words[1]) }
            Defaults[key] = words[2]
            reply("ok")
        case ("server-origin", 2):
            reply("origin \(words[1]) \(server.record(forKey: storedName(words[1]))?.timestamp.origin ?? "(none)")")
        case ("flush", 1):
            try Defaults.flushAll()
            reply("ok")
        case ("journal", 1):
            try Defaults.flushAll()
            let summary = SyncJournal.summaries().first { $0.suite == suite.name }
            reply(
                "journal pending=\(summary?.pendingChanges ?? 0) refused=\(summary?.refusedChanges ?? 0) "
                    + "managed=\(summary?.managedChanges ?? 0) problem=\(summary?.problem ?? "(none)")")
        case ("quit", 1):
            try? Defaults.flushAll()
            for run in runs { run.cancel() }
            reply("ok")
            exit(0)
        case (let command, _) where floodCommands.contains(command):  // EngineBackpressureTests
            reply(try floodCommand(words))
        case (let command, _) where engineCommands.contains(command):  // EngineClockTests and EngineConvergenceTests
            reply(try await engineCommand(words))
        default:
            reply("error unknown command: \(line)")
        }
    } catch {
        reply("error \(error)")
    }
}

enum HelperError: Error, CustomStringConvertible {
    case unknownKey(String)

    var description: String {
        switch self {
        case .unknownKey(let name): "no declared key \(name)"
        }
    }
}

/// What a token holder without the passphrase can do: push a record of its own over `name`,
/// one version later than what the server holds.
@MainActor func pushLater(_ value: Data?, over name: String) async throws {
    let held = server.record(forKey: name)?.timestamp ?? SyncTimestamp(wallTime: 0, counter: 0, origin: "")
    try await attacker.push([
        SyncRecord(
            key: name, value: value,
            timestamp: SyncTimestamp(wallTime: held.wallTime, counter: held.counter + 1, origin: "x"))
    ])
}
