import Foundation
import Synchronization
import TestSupport

/// One `bash` that runs blocks of shell commands one after the other, as an operator pastes them
/// into one shell: what a block exports, and the jobs it starts with `&`, stay for the next.
///
/// `-e`: a command that fails ends the shell, and the test with it, showing what the shell printed.
/// The jobs are stopped with SIGTERM by ``stop()``, or killed when the shell goes unstopped (a
/// failed test), so that no server outlives its test.
final class ArticleShell: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let child: ChildProcess
    private let blocksRun = Mutex(0)
    private let jobs = Mutex<Set<pid_t>>([])

    init(environment: [String: String], directory: String) throws {
        child = try ChildProcess(
            "/bin/bash", ["-e", "-o", "pipefail"], environment: environment, directory: directory, input: .pipe)
    }

    /// Runs `code` and returns the lines it printed on its standard output.
    func run(_ code: String, timeout: Duration = .seconds(120)) async throws -> [String] {
        let number = blocksRun.withLock { count in
            count += 1
            return count
        }
        let start = child.lines().count
        try child.write("echo '@@begin \(number)'\n\(code)\necho \"@@end \(number) $(jobs -p | tr '\\n' ' ')\"\n")
        let end = try await child.line(after: start, timeout: timeout) { $0.hasPrefix("@@end \(number) ") }
        let started = end.split(separator: " ").dropFirst(2).compactMap { pid_t($0) }
        jobs.withLock { $0.formUnion(started) }
        let lines = child.lines().dropFirst(start)
        guard let begin = lines.firstIndex(of: "@@begin \(number)"), let stop = lines.firstIndex(of: end) else {
            return []
        }
        return Array(lines[(begin + 1)..<stop])
    }

    /// What the shell and its jobs wrote on their standard error so far (the servers' logs).
    var log: String { child.error }

    /// Stops the jobs (SIGTERM: the servers drain, nginx stops its workers) and waits for them,
    /// then for the shell.
    func stop() async throws {
        for job in jobs.withLock({ $0 }) { kill(job, SIGTERM) }
        try child.write("wait\nexit 0\n")
        child.closeInput()
        let termination = try await child.wait(timeout: .seconds(60))
        jobs.withLock { $0.removeAll() }
        guard termination == .exited(0) else {
            throw Failure(description: "the shell \(termination); \(log.suffix(2000))")
        }
    }

    deinit {
        // Jobs of a shell that was not stopped: the shell still runs, so it has not reaped them, and
        // their IDs are still theirs.
        for job in jobs.withLock({ $0 }) { kill(job, SIGKILL) }
    }
}
