import Foundation
import Synchronization

/// `defaults-sync-server` instances over the benchmark's PostgreSQL, started from
/// `$DEFAULTS_SYNC_SERVER` or else the `SyncService/` package's release build (built first when
/// missing).
final class Service {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let packageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SyncService")

    /// How long an instance may take to print its ports.
    static let startLimit: TimeInterval = 60

    let executable: String
    let keyFile: String
    /// The instances' own database: where `token --assign-node` asks for a user's node.
    let database: String
    private(set) var instances: [(process: Process, port: Int, metricsPort: Int)] = []
    /// Whether tokens name the user's node, assigned by the directory in ``database`` (P17).
    var assignsNodes = false

    /// `count` instances over `database`, each with this process's environment and `environment`
    /// (where a node's `env:NAME` reference is found).
    init(database: String, instances count: Int, options: [String], environment: [String: String] = [:]) throws {
        executable = try Self.built()
        self.database = database
        keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("p11-\(UUID().uuidString).key").path
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        guard FileManager.default.createFile(atPath: keyFile, contents: key, attributes: [.posixPermissions: 0o600])
        else { throw Failure(description: "cannot write \(keyFile)") }
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.arguments =
                [
                    "serve", "--database-url", database, "--port", "0", "--metrics-port", "0", "--token-key-file",
                    keyFile, "--log-level", "warning",
                ]
                + options
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // An instance that never listens (one hung at its start, ignoring SIGTERM, on
            // 2026-12-03) is killed, which ends the wait below, rather than waited on for ever.
            let listened = Atomic<Bool>(false)
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.startLimit) {
                if !listened.load(ordering: .relaxed) { kill(pid, SIGKILL) }
            }
            // `listening on HOST:PORT` and `metrics on HOST:PORT`, in either order.
            var lines = Data()
            while lines.filter({ $0 == UInt8(ascii: "\n") }).count < 2 {
                let data = output.fileHandleForReading.availableData
                guard !data.isEmpty else {
                    throw Failure(
                        description:
                            "the server exited (or was killed, silent for \(Int(Self.startLimit)) s) before listening")
                }
                lines += data
            }
            listened.store(true, ordering: .relaxed)
            let text = String(decoding: lines, as: UTF8.self)
            func port(_ prefix: String) -> Int? {
                text.split(separator: "\n").first { $0.hasPrefix(prefix) }?.split(separator: ":").last.flatMap {
                    Int($0)
                }
            }
            guard let devices = port("listening on "), let metrics = port("metrics on ") else {
                throw Failure(description: "no ports in \(text)")
            }
            instances.append((process, devices, metrics))
        }
    }

    var urls: [String] { instances.map { "ws://127.0.0.1:\($0.port)" } }

    /// Tokens for `users`, minted by `defaults-sync-server token` (as a deployment's script would),
    /// naming each user's node when ``assignsNodes``.
    func tokens(for users: [String], namespace: String) throws -> [String] {
        guard !users.isEmpty else { return [] }
        // One run signs them all (one process per token took 3.5 minutes for P11's 2,500 users).
        let printed = try Self.command(
            ["token", "--key-file", keyFile, "--namespace", namespace] + users.flatMap { ["--user", $0] }
                + (assignsNodes ? ["--assign-node"] : []), database: database, executable: executable)
        let tokens = printed.split(separator: "\n").map(String.init)
        guard tokens.count == users.count else {
            throw Failure(
                description: "defaults-sync-server token printed \(tokens.count) tokens for \(users.count) users")
        }
        return tokens
    }

    /// What `defaults-sync-server arguments` prints, the directory's database in
    /// `DEFAULTS_SYNC_DATABASE_URL` (not on its command line); throws when it fails.
    static func command(_ arguments: [String], database: String, executable: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try executable ?? built())
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["DEFAULTS_SYNC_DATABASE_URL": database]) {
            $1
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "defaults-sync-server \(arguments.first ?? "") exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What each instance holds now (``ProcessFootprint``), its heap as its `/metrics` reports it.
    func footprints() -> [ProcessFootprint] {
        instances.map { instance in
            var footprint = ProcessFootprint(of: instance.process.processIdentifier)
            footprint.heapBytes = Self.heapInUse(metricsPort: instance.metricsPort)
            return footprint
        }
    }

    /// `defaults_sync_heap_in_use_bytes` from an instance's `GET /metrics`, through `curl` (0 when
    /// unreadable, or without `/usr/bin/curl`: the line then shows 0.0 KB of heap).
    private static func heapInUse(metricsPort: Int) -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "--max-time", "10", "http://127.0.0.1:\(metricsPort)/metrics"]
        let output = Pipe()
        process.standardOutput = output
        guard (try? process.run()) != nil else { return 0 }
        let page = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let line = page.split(separator: "\n").first { $0.hasPrefix("defaults_sync_heap_in_use_bytes ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }

    /// Runs `body` with the instances stopped where they are (SIGSTOP), then lets them go on: an
    /// idle instance still receives and opens every notification on the database (in `perf`,
    /// 2026-12-03, the two of P11's first run took 4.6 % of the machine during the writes of its
    /// 10,000-connection run), which a run measured on other instances should not pay.
    /// Once going again, they are given time to catch up (``settle()``) before what follows uses
    /// them.
    func paused<Result>(_ body: () throws -> Result) rethrows -> Result {
        for instance in instances { kill(instance.process.processIdentifier, SIGSTOP) }
        defer {
            for instance in instances { kill(instance.process.processIdentifier, SIGCONT) }
            settle()
        }
        return try body()
    }

    /// Waits until every instance answers `GET /health` with 200 (a minute at most each), then a
    /// few seconds more for the notifications that reached it meanwhile.
    func settle() {
        for instance in instances {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, !Self.answersHealth(port: instance.port) { usleep(200_000) }
        }
        sleep(3)
    }

    /// Whether the devices' port at `port` answers `GET /health` with 200, through `curl`.
    private static func answersHealth(port: Int) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = [
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "http://127.0.0.1:\(port)/health",
        ]
        let output = Pipe()
        process.standardOutput = output
        guard (try? process.run()) != nil else { return false }
        let code = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return code == "200"
    }

    func stop() {
        for instance in instances {
            instance.process.terminate()
            instance.process.waitUntilExit()
        }
        unlink(keyFile)
    }

    /// `$DEFAULTS_SYNC_SERVER` (another commit's build, say), or the release build of the server,
    /// built now when missing.
    private static func built() throws -> String {
        if let path = ProcessInfo.processInfo.environment["DEFAULTS_SYNC_SERVER"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw Failure(description: "DEFAULTS_SYNC_SERVER: no executable at \(path)")
            }
            return path
        }
        let path = packageDirectory.appendingPathComponent(".build/release/defaults-sync-server").path
        if !FileManager.default.isExecutableFile(atPath: path) {
            print("building defaults-sync-server (release) in \(packageDirectory.path) ...")
            fflush(nil)
            let status = system(
                "cd '\(packageDirectory.path)' && swift build -c release --product defaults-sync-server > /dev/null")
            guard status == 0, FileManager.default.isExecutableFile(atPath: path) else {
                throw Failure(description: "could not build defaults-sync-server in \(packageDirectory.path)")
            }
        }
        return path
    }
}

/// What a process holds, read from `/proc/PID`: its resident memory (`VmRSS` in `status`), the
/// anonymous part of it (`RssAnon`: heap and stacks, not the mapped binary and libraries) and its
/// open file descriptors (the entries of `fd/`). Zero where the process is gone.
struct ProcessFootprint {
    var residentBytes = 0
    var anonymousBytes = 0
    var descriptors = 0
    /// What the allocator has handed out and not taken back (the server's `mallinfo2`, through its
    /// metrics); 0 where not read.
    var heapBytes = 0

    /// `process`'s footprint now; without `countingDescriptors` (a sampler's, every 100 ms, which
    /// would list thousands of entries each time), `descriptors` stays 0.
    init(of process: pid_t, countingDescriptors: Bool = true) {
        let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
        /// A field of `status` in bytes (the file gives kB: `VmRSS:\t  1234 kB`).
        func bytes(_ field: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
            return (Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") ?? 0) * 1024
        }
        residentBytes = bytes("VmRSS")
        anonymousBytes = bytes("RssAnon")
        if countingDescriptors {
            descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd").count) ?? 0
        }
    }

    /// The growth from `before` to `after` (one footprint per process, in the same order), summed
    /// over the processes and divided by `connections`: what each connection costs them.
    static func growthPerConnection(from before: [Self], to after: [Self], connections: Int) -> (
        residentBytes: Double, anonymousBytes: Double, descriptors: Double, heapBytes: Double
    ) {
        func growth(_ field: KeyPath<Self, Int>) -> Double {
            Double(zip(before, after).map { $1[keyPath: field] - $0[keyPath: field] }.reduce(0, +))
                / Double(max(1, connections))
        }
        return (growth(\.residentBytes), growth(\.anonymousBytes), growth(\.descriptors), growth(\.heapBytes))
    }
}
