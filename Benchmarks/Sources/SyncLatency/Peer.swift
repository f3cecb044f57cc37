import Foundation
import Synchronization

/// A child process of the benchmark, with its own config directory, driven through its stdin.
final class Peer: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let process: Process
    private let input: FileHandle
    /// The child's `XDG_CONFIG_HOME`, removed by ``quit()``.
    private let directory: URL
    private let lines = Mutex<(complete: [String], partial: String, read: Int)>(([], "", 0))

    init(role: String, url: String, namespace: String, token: String? = nil, arguments: [String] = []) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--child", role] + arguments
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("p8-\(UUID().uuidString)")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        environment["DEFAULTS_SYNC_URL"] = url
        environment["P8_NAMESPACE"] = namespace
        environment["P8_TOKEN"] = token
        process.environment = environment
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        input = stdin.fileHandleForWriting
        try process.run()
        let reader = stdout.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = reader.availableData
                if data.isEmpty { return }
                lines.withLock { lines in
                    var pieces = (lines.partial + String(decoding: data, as: UTF8.self))
                        .split(separator: "\n", omittingEmptySubsequences: false)
                    lines.partial = String(pieces.removeLast())
                    lines.complete.append(contentsOf: pieces.map(String.init))
                }
            }
        }
    }

    func send(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// Tells the child to stop (unless it has ended by itself), waits until it has (killing it
    /// after a minute), and removes its config directory. A child that has just ended makes the
    /// write fail (SIGPIPE is ignored).
    func quit() {
        if process.isRunning { try? input.write(contentsOf: Data("quit\n".utf8)) }
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The next unread line matching `predicate` (lines before it are consumed).
    func next(timeout: TimeInterval = 60, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let found = lines.withLock { lines -> String? in
                while lines.read < lines.complete.count {
                    let line = lines.complete[lines.read]
                    lines.read += 1
                    if predicate(line) { return line }
                }
                return nil
            }
            if let found { return found }
            usleep(200)
        }
        throw Failure(description: "timed out waiting for a line from a child")
    }
}
