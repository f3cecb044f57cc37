import Defaults
import DefaultsPostgres
import Foundation

/// The child processes of the benchmark: one "machine" each.
enum Child {
    static func reply(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func run(role: String, arguments: [String]) async {
        guard let url = ProcessInfo.processInfo.environment["DEFAULTS_SYNC_URL"],
            let namespace = ProcessInfo.processInfo.environment["P8_NAMESPACE"],
            let store = try? PostgresSyncStore(url: url, namespace: namespace)
        else {
            reply("error no store")
            return
        }
        let suite = FileSuite(name: "p8")
        if role != "bulk" {
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
        case "bulk":
            await bulk(arguments.compactMap { Int($0) }, suite: suite, store: store)
        default:
            reply("error unknown role \(role)")
        }
    }

    /// Writes this writer's keys when told to, then waits until every writer's keys arrived.
    static func bulk(_ numbers: [Int], suite: FileSuite, store: PostgresSyncStore) async {
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
        let deadline = Date().addingTimeInterval(300)
        var missing = Int.max
        while Date() < deadline {
            missing = keys.joined().enumerated().filter { Defaults[$0.element] != "v\($0.offset % writesEach)" }.count
            if missing == 0 { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        reply(missing == 0 ? "converged \(Date().timeIntervalSince1970)" : "lost \(missing)")
        while let line = readLine(), line != "quit" {}
    }
}
