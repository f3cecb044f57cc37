// One "machine" for the sync tests and the P8 benchmark: a process with its own config directory
// (`XDG_CONFIG_HOME`) that syncs `String?` keys through PostgreSQL, driven line by line on stdin.
//
// Arguments: [--namespace NS] [--keys a,b] [--clock-offset SECONDS] [--fast-reconnect]
// [--passphrase P]
// [--token T | --token-file FILE | --token-command COMMAND]
// (--fast-reconnect: short reconnect delays, a liveness check every second, 10 s to answer;
// --passphrase: end-to-end encrypted through `EncryptedSyncStore`)
// Environment: DEFAULTS_SYNC_URL (no store when unset or empty): postgres://… for a
// `PostgresSyncStore`, ws://… for a `SyncServiceStore` with the token of --token, or with a token
// provider that reads FILE each time it is asked (its user and namespace: those of the token FILE
// holds at start), or that runs COMMAND with /bin/sh each time and takes what it prints, as a
// sign-in service hands tokens out (`defaults-sync-server token --assign-node ...`).
//
// Commands, one per line; each answers one line (`ok`, `value KEY VALUE`, `error MESSAGE`, ...):
//   set KEY VALUE | big KEY BYTES | reset KEY | get KEY | flush | wait | status | quit
//   wait-at-most SECONDS  waits for sync at most that long; answers with the status it returns
//   tokens        answers `tokens N`: how many times the token provider of --token-file was asked
//   fill PREFIX COUNT VALUE   declares the keys PREFIX-0 … PREFIX-(COUNT-1) now (after connecting,
//                 as lazy `static let` keys are) and sets each to VALUE-<i>
//   count PREFIX COUNT VALUE  declares those keys if needed; answers `count N`, how many read VALUE-<i>
//   nul KEY VALUE sets the key KEY followed by a NUL character and `x` (a name PostgreSQL refuses)
//   watch KEY     prints `updated KEY VALUE` for each value `Defaults.updates` delivers
//   observe KEY   prints `observed KEY OLD NEW` for each change `Defaults.observe` delivers
//   relay FROM TO observes FROM; each change makes another thread set TO to `relayed-NEW`, and the
//                 observer waits for that thread before it prints `relayed FROM NEW`
// `(nil)` stands for no value.
@_spi(Testing) import Defaults
import DefaultsPostgres
import DefaultsSyncClient
import DefaultsSyncEncryption
import Foundation
import Synchronization

func reply(_ line: String) {
    // One write per line, so that lines from observer threads never interleave.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--fast-reconnect" {
        options[argument] = ""
    } else if let value = arguments.popFirst() {
        options[argument] = value
    }
}

/// What `command`, run by /bin/sh, prints, trimmed; throws when it fails.
func output(of command: String) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            let pipe = Pipe()
            process.standardOutput = pipe
            do {
                try process.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(command) failed"])
                }
                continuation.resume(
                    returning: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

let suite = FileSuite(name: "sync-helper")
/// How many times the token provider was asked.
let tokensAsked = Mutex(0)
nonisolated(unsafe) var keys: [String: Defaults.Key<String?>] = [:]

func key(_ name: String) -> Defaults.Key<String?> {
    if let key = keys[name] { return key }
    let key = Defaults.Key<String?>(name, suite: suite, iCloud: true)
    keys[name] = key
    return key
}

Defaults.iCloud.isDebug = ProcessInfo.processInfo.environment["DEFAULTS_SYNC_DEBUG"] != nil
if let url = ProcessInfo.processInfo.environment["DEFAULTS_SYNC_URL"], !url.isEmpty {
    do {
        // --fast-reconnect: tests do not wait half a minute to notice a server that stopped answering.
        let isFast = options["--fast-reconnect"] != nil
        let namespace = options["--namespace"] ?? "sync-helper"
        let reconnectDelays =
            isFast ? .milliseconds(100)...(.milliseconds(400)) : Duration.milliseconds(250)...(.seconds(30))
        var store: any DefaultsSyncStore
        if url.hasPrefix("ws") {
            var service = SyncServiceStore.Options()
            service.reconnectDelays = reconnectDelays
            service.responseTimeout = isFast ? .seconds(10) : .seconds(30)
            service.pingInterval = isFast ? .seconds(1) : .seconds(30)
            let provider: (@Sendable () async throws -> String)?
            if let file = options["--token-file"] {
                provider = {
                    try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                }
            } else if let command = options["--token-command"] {
                provider = { try await output(of: command) }
            } else {
                provider = nil
            }
            if let provider {
                // The user and the namespace the first token names, as the app knows them.
                let account = try SyncServiceStore(url: url, token: try await provider())
                store = try SyncServiceStore(
                    url: url, user: account.user, namespace: account.namespace, passphrase: options["--passphrase"],
                    options: service
                ) {
                    tokensAsked.withLock { $0 += 1 }
                    return try await provider()
                }
            } else {
                store = try SyncServiceStore(
                    url: url, token: options["--token"] ?? "", passphrase: options["--passphrase"], options: service)
            }
        } else {
            store = try PostgresSyncStore(
                url: url,
                namespace: namespace,
                reconnectDelays: reconnectDelays,
                responseTimeout: isFast ? .seconds(10) : .seconds(30),
                livenessCheckInterval: isFast ? .seconds(1) : .seconds(30))
            if let passphrase = options["--passphrase"] {
                store = try EncryptedSyncStore(store, passphrase: passphrase, namespace: namespace)
            }
        }
        #if SYNC_SERVICE_PACKAGE
        // Built by the SyncService package, which cannot reach this package's `package` API.
        Defaults.iCloud.use(store)
        #else
        let offset = Double(options["--clock-offset"] ?? "0") ?? 0
        Defaults.iCloud.use(store, clock: HybridLogicalClock(wallClock: { Date().addingTimeInterval(offset) }))
        #endif
    } catch {
        reply("error \(error)")
    }
}
for name in (options["--keys"] ?? "").split(separator: ",") {
    _ = key(String(name))
}

func describe(_ status: SyncStatus) -> String {
    "status connected=\(status.isConnected) pending=\(status.pendingChanges) "
        + "refused=\(status.refusedKeys.count) lag=\(status.lag.map { "\($0.components.seconds)s" } ?? "(none)") "
        + "error=\(status.lastError ?? "(none)")"
}

var observations: [Defaults.Observation] = []
var tasks: [Task<Void, Never>] = []
reply("ready")

while let line = readLine() {
    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch (words.first ?? "", words.count) {
    case ("set", 3):
        Defaults[key(words[1])] = words[2]
        reply("ok")
    case ("big", 3):
        Defaults[key(words[1])] = String(repeating: "x", count: Int(words[2]) ?? 0)
        reply("ok")
    case ("reset", 2):
        Defaults.reset(key(words[1]))
        reply("ok")
    case ("fill", 3):
        let parts = words[2].split(separator: " ")
        let (prefix, count, value) = (words[1], Int(parts.first ?? "") ?? 0, parts.dropFirst().first ?? "")
        for index in 0..<count {
            Defaults[key("\(prefix)-\(index)")] = "\(value)-\(index)"
        }
        reply("ok")
    case ("count", 3):
        let parts = words[2].split(separator: " ")
        let (prefix, count, value) = (words[1], Int(parts.first ?? "") ?? 0, parts.dropFirst().first ?? "")
        let matching = (0..<count).filter { Defaults[key("\(prefix)-\($0)")] == "\(value)-\($0)" }.count
        reply("count \(matching)")
    case ("nul", 3):
        Defaults[key(words[1] + "\u{0}x")] = words[2]
        reply("ok")
    case ("get", 2):
        reply("value \(words[1]) \(Defaults[key(words[1])] ?? "(nil)")")
    case ("flush", 1):
        do {
            try Defaults.flushAll()
            reply("ok")
        } catch {
            reply("error \(error)")
        }
    case ("wait", 1):
        await Defaults.iCloud.waitForSyncCompletion()
        reply("ok")
    case ("tokens", 1):
        reply("tokens \(tokensAsked.withLock { $0 })")
    case ("status", 1):
        reply(describe(Defaults.iCloud.status))
    case ("wait-at-most", 2):
        reply(describe(await Defaults.iCloud.waitForSyncCompletion(timeout: .seconds(Double(words[1]) ?? 1))))
    case ("watch", 2):
        let watched = key(words[1])
        let name = words[1]
        tasks.append(
            Task.detached {
                for await value in Defaults.updates(watched, initial: false) {
                    reply("updated \(name) \(value ?? "(nil)")")
                }
            })
        reply("ok")
    case ("observe", 2):
        let name = words[1]
        observations.append(
            Defaults.observe(key(name), options: []) { change in
                reply("observed \(name) \(change.oldValue ?? "(nil)") \(change.newValue ?? "(nil)")")
            })
        reply("ok")
    case ("relay", 3):
        let (from, to) = (words[1], key(words[2]))
        observations.append(
            Defaults.observe(key(from), options: []) { change in
                let value = change.newValue ?? "(nil)"
                let written = DispatchSemaphore(value: 0)
                Thread {
                    Defaults[to] = "relayed-\(value)"
                    written.signal()
                }.start()
                written.wait()
                reply("relayed \(from) \(value)")
            })
        reply("ok")
    case ("quit", 1):
        try? Defaults.flushAll()
        reply("ok")
        exit(0)
    default:
        reply("error unknown command: \(line)")
    }
}
