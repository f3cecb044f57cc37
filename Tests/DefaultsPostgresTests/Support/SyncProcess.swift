import Foundation
import Synchronization

/// A running `DefaultsSyncTestHelper`: one machine with its own config directory, driven by
/// commands on its stdin (see Tests/SyncHelper/main.swift).
final class SyncProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let process: Process
    private let input: FileHandle
    private let buffer = Buffer()

    /// What the process printed, filled by the pipes' reading threads.
    private final class Buffer: Sendable {
        let received = Mutex<(lines: [String], partial: String)>(([], ""))
        let errorOutput = Mutex("")
    }

    static var helperURL: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("DefaultsSyncTestHelper")
    }

    /// Starts a machine syncing through `url` (none when `nil`) and waits until it is ready.
    init(
        configDirectory: URL,
        url: String?,
        namespace: String,
        keys: [String] = [],
        clockOffset: Double = 0
    ) async throws {
        let process = Process()
        process.executableURL = Self.helperURL
        process.arguments = [
            "--namespace", namespace, "--clock-offset", "\(clockOffset)", "--fast-reconnect",
            "--keys", keys.joined(separator: ","),
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = configDirectory.path
        environment["DEFAULTS_SYNC_URL"] = url ?? ""
        process.environment = environment
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        self.process = process
        input = stdin.fileHandleForWriting
        let buffer = buffer
        try process.run()
        // Read on threads of their own until the end of each pipe, not with `readabilityHandler`:
        // its dispatch source outlived the file handle here and crashed libdispatch's event loop.
        Self.drain(stdout.fileHandleForReading) { text in
            buffer.received.withLock { received in
                var pieces = (received.partial + text).split(separator: "\n", omittingEmptySubsequences: false)
                received.partial = String(pieces.removeLast())
                received.lines.append(contentsOf: pieces.map(String.init))
            }
        }
        Self.drain(stderr.fileHandleForReading) { text in
            buffer.errorOutput.withLock { $0 += text }
        }
        _ = try await next { $0 == "ready" }
    }

    /// Passes what `handle` reads to `append` until the end of the pipe, on a thread of its own.
    private static func drain(_ handle: FileHandle, into append: @escaping @Sendable (String) -> Void) {
        let reader = Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                append(String(decoding: data, as: UTF8.self))
            }
        }
        reader.start()
    }

    deinit {
        if process.isRunning {
            process.terminate()
        }
    }

    /// What the process wrote to stderr (its log) so far.
    var log: String { buffer.errorOutput.withLock { $0 } }

    /// Every complete line the process printed so far.
    var output: [String] { buffer.received.withLock { $0.lines } }

    /// Sends a command and returns its answer: the next line that is not an observer's report.
    ///
    /// - Throws: When the answer is an `error` line or does not start with `answer`.
    @discardableResult
    func send(_ command: String, answer: String = "", timeout: Duration = .seconds(60)) async throws -> String {
        let start = output.count
        input.write(Data((command + "\n").utf8))
        let line = try await next(after: start, timeout: timeout) {
            !$0.hasPrefix("updated ") && !$0.hasPrefix("observed ")
        }
        guard line.hasPrefix(answer) else {
            throw Failure(description: "\(command): \(line)")
        }
        return line
    }

    /// Waits for a line printed after the first `start` lines that matches `predicate`.
    func next(
        after start: Int = 0, timeout: Duration = .seconds(60), where predicate: (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.dropFirst(start).first(where: predicate) {
                return line
            }
            guard process.isRunning || output.count > start else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw Failure(description: "no expected line; output: \(output.suffix(20)), log: \(log.suffix(2000))")
    }

    func set(_ key: String, _ value: String) async throws { try await send("set \(key) \(value)", answer: "ok") }
    func get(_ key: String) async throws -> String {
        String(try await send("get \(key)", answer: "value \(key) ").dropFirst("value \(key) ".count))
    }
    func waitForSync() async throws { try await send("wait", answer: "ok", timeout: .seconds(120)) }
    func flush() async throws { try await send("flush", answer: "ok") }

    /// Waits until `key` reads `value` in this process.
    func waitUntil(_ key: String, is value: String, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while ContinuousClock.now < deadline {
            last = try await get(key)
            if last == value { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "\(key) is \(last), not \(value); log: \(log.suffix(2000))")
    }

    // Neither waits with `Process.waitUntilExit()`, which was seen to miss an exit on Linux and
    // hang: a killed or quitting process holds nothing another could wait for (its advisory
    // locks go with it).

    /// Ends the process at once (SIGKILL): nothing runs on its way out.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Flushes and ends the process.
    func quit() async throws {
        try await send("quit", answer: "ok")
    }
}
