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
//   journal              journal pending=N problem=P: the journal summary of the helper's suite
//                        (`Defaults.iCloud.journalSummaries()`), read from disk after a flush
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
Defaults.iCloud.use(machine)
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
            let summary = Defaults.iCloud.journalSummaries().first { $0.suite == suite.name }
            reply("journal pending=\(summary?.pendingChanges ?? 0) problem=\(summary?.problem ?? "(none)")")
        case ("quit", 1):
            try? Defaults.flushAll()
            for run in runs { run.cancel() }
            reply("ok")
            exit(0)
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
