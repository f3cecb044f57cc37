import Foundation

/// Runs a program to completion: spawned and reaped here with `posix_spawn` and `waitpid`, not
/// with Foundation's `Process`, whose `waitUntilExit()` was seen to miss a child's exit on Linux
/// and hang. Output goes to files, so that a server the program starts cannot hold a pipe open.
enum Subprocess {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("subprocess-\(UUID().uuidString)").path
        let outputPath = base + ".out"
        let errorPath = base + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw Failure(description: "posix_spawn \(path) failed: \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return Result(
            // Exited normally: the low 7 bits (the signal) are 0; the exit code is the next byte.
            status: status & 0x7f == 0 ? (status >> 8) & 0xff : -1,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
    }
}
