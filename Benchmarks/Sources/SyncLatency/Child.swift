import Defaults
import DefaultsPostgres
import DefaultsSyncClient
import Foundation

/// The child processes of the benchmark: one "machine" each.
enum Child {
    static func reply(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func run(role: String, arguments: [String]) async {
        if role == "p11" {
            return await P11Devices.run(arguments.compactMap { Int($0) })
        }
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["DEFAULTS_SYNC_URL"], let namespace = environment["P8_NAMESPACE"],
            let store = try? makeStore(url: url, namespace: namespace, token: environment["P8_TOKEN"])
        else {
            reply("error no store")
            return
        }
        let suite = FileSuite(name: "p8")
        // `bulk` connects once its keys are declared; `floor` pushes through the store itself.
        if role != "bulk", role != "floor" {
            Defaults.iCloud.use(store)
        }
        switch role {
        case "writer":
            let key = Defaults.Key<String>("p8", default: "", suite: suite, iCloud: true)
            await Defaults.iCloud.waitForSyncCompletion()
            reply("ready")
            while let line = readLine(), line != "quit" {
                // The value carries the wall time of the write; B measures against its own.
                Defaults[key] = "\(line.dropFirst(2)) \(Date().timeIntervalSince1970)"
            }
        case "observer":
            let key = Defaults.Key<String>("p8", default: "", suite: suite, iCloud: true)
            await Defaults.iCloud.waitForSyncCompletion()
            let observation = Defaults.observe(key, options: []) { change in
                let now = Date().timeIntervalSince1970
                let parts = change.newValue.split(separator: " ")
                guard parts.count == 2, let sent = Double(parts[1]) else { return }
                reply("seen \(parts[0]) \(Int((now - sent) * 1e9))")
            }
            reply("ready")
            while let line = readLine(), line != "quit" {}
            observation.invalidate()
        case "witness":
            await P11Devices.witness(arguments.compactMap { Int($0) }, suite: suite)
        case "bulk":
            await bulk(arguments.compactMap { Int($0) }, suite: suite, store: store)
        case "lazy-bulk":
            await lazyBulk(arguments.compactMap { Int($0) }, suite: suite)
        case "floor":
            await floor(arguments.compactMap { Int($0) }, store: store)
        default:
            reply("error unknown role \(role)")
        }
    }

    /// PostgreSQL directly, or the sync service (a `ws://` URL, with a token).
    static func makeStore(url: String, namespace: String, token: String?) throws -> any DefaultsSyncStore {
        if url.hasPrefix("ws") {
            return try SyncServiceStore(url: url, token: token ?? "")
        }
        return try PostgresSyncStore(url: url, namespace: namespace)
    }

    /// Writes this writer's keys when told to, then waits until every writer's keys arrived.
    static func bulk(_ numbers: [Int], suite: FileSuite, store: any DefaultsSyncStore) async {
        guard numbers.count == 3 else { return }
        let (me, writers, writesEach) = (numbers[0], numbers[1], numbers[2])
        let keys = (0..<writers).map { writer in
            (0..<writesEach).map { Defaults.Key<String>("w\(writer)-\($0)", default: "", suite: suite, iCloud: true) }
        }
        // Connected after the keys are declared: one catch-up for all of them.
        Defaults.iCloud.use(store)
        await Defaults.iCloud.waitForSyncCompletion()
        reply("ready")
        guard readLine() == "go" else { return }
        for (index, key) in keys[me].enumerated() {
            Defaults[key] = "v\(index)"
        }
        await reportConvergence(of: keys)
    }

    /// Waits until every writer's values arrived (each writer's key `i` reads `v<i>`), for at most
    /// ten minutes; replies `converged <time>` or `lost <missing>`, then waits for `quit`. Each
    /// look reads only the keys still missing, every 10 ms: on 2 cores, reading all 4,000 every
    /// 5 ms took a fifth of the machine from what is measured.
    static func reportConvergence(of keys: [[Defaults.Key<String>]]) async {
        let deadline = Date().addingTimeInterval(600)
        var missing = keys.flatMap { $0.enumerated().map { (key: $0.element, value: "v\($0.offset)") } }
        while Date() < deadline {
            missing.removeAll { Defaults[$0.key] == $0.value }
            if missing.isEmpty { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        reply(missing.isEmpty ? "converged \(Date().timeIntervalSince1970)" : "lost \(missing.count)")
        while let line = readLine(), line != "quit" {}
    }

    /// P10: connected first, then, when told to, declares every writer's keys one by one (as
    /// lazily initialized `static let` keys are) while writing its own, and waits until every
    /// writer's values arrived.
    static func lazyBulk(_ numbers: [Int], suite: FileSuite) async {
        guard numbers.count == 3 else { return }
        let (me, writers, writesEach) = (numbers[0], numbers[1], numbers[2])
        await Defaults.iCloud.waitForSyncCompletion()
        reply("ready")
        guard readLine() == "go" else { return }
        var keys: [[Defaults.Key<String>]] = Array(repeating: [], count: writers)
        for index in 0..<writesEach {
            for writer in 0..<writers {
                let key = Defaults.Key<String>("w\(writer)-\(index)", default: "", suite: suite, iCloud: true)
                keys[writer].append(key)
                if writer == me {
                    Defaults[key] = "v\(index)"
                }
            }
        }
        await reportConvergence(of: keys)
    }

    /// P10's floor: the same upserts sent by one connection of the store, in batches of 500.
    static func floor(_ numbers: [Int], store: any DefaultsSyncStore) async {
        guard numbers.count == 2 else { return }
        let (writers, writesEach) = (numbers[0], numbers[1])
        let connected = AsyncStream<Void>.makeStream()
        let running = Task {
            await store.run { event in
                if case .connected = event { connected.continuation.yield() }
            }
        }
        for await _ in connected.stream { break }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let records = (0..<writers).flatMap { writer in
            (0..<writesEach).map { index in
                SyncRecord(
                    key: "w\(writer)-\(index)", value: Data("v\(index)".utf8),
                    timestamp: SyncTimestamp(wallTime: now, counter: Int64(index), origin: "floor"))
            }
        }
        let start = Date()
        do {
            for batch in stride(from: 0, to: records.count, by: 500) {
                try await store.push(Array(records[batch..<min(batch + 500, records.count)]))
            }
            reply("floor \(Date().timeIntervalSince(start))")
        } catch {
            reply("error \(error)")
        }
        running.cancel()
    }
}
